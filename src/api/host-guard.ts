import { isIP } from 'node:net';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from './api-error.js';

export interface HostGuardOptions {
  /** The address the server listens on (`api.host`). */
  bindHost: string;
  /** `api.allowed_hosts`: further host names (or addresses) clients reach the API by. */
  allowedHosts: readonly string[];
  /** Whether `api.tokens` is configured. */
  authenticated: boolean;
}

const loopbackNames = ['localhost', '127.0.0.1', '[::1]'];
const wildcardAddresses = new Set(['0.0.0.0', '[::]']);

/**
 * The guard against DNS rebinding, for every route but the public ones (health checks, which orchestrators
 * call by a pod's address). A web page on evil.example whose name is rebound to 127.0.0.1 makes the browser
 * send same-origin requests to the local API, carrying `Host: evil.example`; a page of another site sends
 * `Origin: http://evil.example`. Without tokens nothing else stops either, so both headers must name a host
 * the API answers to: a loopback name, the bound address, or one of `api.allowed_hosts` (any port). When
 * bound to a non-loopback address, any IP address is accepted as `Host` too: rebinding needs a DNS name, and
 * clients reach such a server by its addresses. An `Origin` equal to the request's own host is the API's own
 * page (/docs) and is accepted.
 *
 * With tokens the guard is off unless `api.allowed_hosts` is set: a rebinding page cannot know a token, and
 * a browser never adds one by itself (unlike a cookie).
 */
export function hostGuard(options: HostGuardOptions): onRequestHookHandler {
  const allowed = allowedHostNames(options);
  const anyAddress = !isLoopback(normalizeHostName(options.bindHost));
  const enabled = !options.authenticated || options.allowedHosts.length > 0;
  return async (request: FastifyRequest) => {
    if (!enabled || request.routeOptions.config.public === true) return;
    const host = request.headers.host;
    if (host !== undefined) {
      const name = hostNameOf(host);
      const accepted = name !== undefined && (allowed.has(name) || (anyAddress && isIpAddress(name)));
      if (!accepted) throw refusal('Host', host);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !originAccepted(origin, host, allowed)) throw refusal('Origin', origin);
  };
}

/** The host names the API answers to, lower case, IPv6 addresses in brackets (as in a Host header). */
export function allowedHostNames(options: Pick<HostGuardOptions, 'bindHost' | 'allowedHosts'>): Set<string> {
  const names = new Set([...loopbackNames, ...options.allowedHosts.map(normalizeHostName)]);
  const bound = normalizeHostName(options.bindHost);
  if (!wildcardAddresses.has(bound)) names.add(bound);
  return names;
}

/** `host[:port]` or `[v6]:port` → the host name, normalized; undefined when it is neither. */
export function hostNameOf(authority: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@]+)(?::\d*)?$/i.exec(authority.trim());
  return match?.[1] === undefined ? undefined : normalizeHostName(match[1]);
}

function originAccepted(origin: string, host: string | undefined, allowed: ReadonlySet<string>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // "null" (a sandboxed frame, a file) or garbage: no origin we could answer to.
    return false;
  }
  if (url.host !== '' && host !== undefined && url.host === host.trim().toLowerCase()) return true;
  return allowed.has(normalizeHostName(url.hostname));
}

/** Lower case, without a trailing dot, IPv6 addresses in brackets. */
function normalizeHostName(name: string): string {
  const lower = name.trim().toLowerCase().replace(/\.$/, '');
  return isIP(lower) === 6 ? `[${lower}]` : lower;
}

function isLoopback(name: string): boolean {
  return loopbackNames.includes(name) || /^127\.\d+\.\d+\.\d+$/.test(name);
}

function isIpAddress(name: string): boolean {
  return isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

function refusal(header: 'Host' | 'Origin', value: string): ApiError {
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  return new ApiError(
    'forbidden',
    `requests with ${header} "${shown}" are refused: the API answers only to loopback names, its own ` +
      'address and api.allowed_hosts (a guard against DNS rebinding; add the name to api.allowed_hosts, or ' +
      'set api.tokens)',
    { header: header.toLowerCase() },
  );
}
