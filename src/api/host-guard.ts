import { isIP } from 'node:net';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from './api-error.js';
import { describeValidationIssues } from './validation-issues.js';

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

/**
 * What the host guard's reading of `Host` relies on, for every request (health checks included): the target
 * is a path (origin-form), not `http://other.example/…` (absolute-form, which names the host in the target
 * and which HTTP says overrides `Host`; only proxies take it), and `Host` and `Origin` are sent once (Node
 * keeps the first of two, and a proxy in front may have read the other). Refused with 400 naming the part.
 */
export function requestShapeGuard(): onRequestHookHandler {
  return async (request: FastifyRequest) => {
    const target = request.raw.url ?? '';
    if (!target.startsWith('/')) {
      throw malformed(
        'path',
        '',
        'the request target must be a path ("/v1/…"); absolute-form is for proxies',
      );
    }
    const counts = new Map<string, number>();
    const { rawHeaders } = request.raw;
    for (let index = 0; index < rawHeaders.length; index += 2) {
      const name = rawHeaders[index]?.toLowerCase() ?? '';
      if (name === 'host' || name === 'origin') counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    for (const [name, count] of counts) {
      if (count > 1) throw malformed('headers', name, `sent ${count} times; send it once`);
    }
  };
}

function malformed(location: string, path: string, message: string): ApiError {
  const issues = [{ location, path, message }];
  return new ApiError('invalid_request', describeValidationIssues(issues), { issues });
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
  // A DNS name or an IPv4 address (letters, digits, dots, hyphens, underscores), or [an IPv6 address]:
  // nothing else (a comma-joined list, spaces, userinfo) is a host.
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d*)?$/i.exec(authority.trim());
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
