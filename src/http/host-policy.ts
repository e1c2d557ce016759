import { isIP } from 'node:net';

/**
 * Which `Host` and `Origin` an HTTP listener of Ratchet answers to: the API (src/api/host-guard.ts) and a
 * worker's metrics listener (src/telemetry/metrics-listener.ts) share it. Pure: no framework, no I/O.
 *
 * A web page on evil.example whose name is rebound to 127.0.0.1 makes the browser send same-origin requests
 * to a local server, carrying `Host: evil.example` (DNS rebinding); a page of another origin, even another
 * port of localhost, sends its own `Origin` with the requests it makes (a form post, a `no-cors` fetch) and
 * needs no answer to cause their effect (CSRF). So `Host` must name a host the server answers to (a loopback
 * name, the bound address, an allowed name, any port; any IP address when bound to a non-loopback address:
 * rebinding needs a DNS name), and `Origin`, when present, must be the request's own origin (scheme http or
 * https, the host and port of `Host`) or one listed.
 */
export interface HostPolicyOptions {
  /** The address the server listens on. */
  bindHost: string;
  /** Further host names (or addresses) clients reach the server by (`api.allowed_hosts`). */
  allowedHosts: readonly string[];
  /** Further origins whose pages may send requests (`api.allowed_origins`), as `scheme://host[:port]`. */
  allowedOrigins: readonly string[];
  /**
   * Whether the server checks a bearer token: then a page, which cannot learn the token, is stopped by it,
   * and each check applies only when its list is configured (`Origin` also when `allowedHosts` is).
   */
  authenticated: boolean;
}

export interface HostPolicy {
  readonly hosts: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;
  /** Any IP address is accepted as `Host` (the server is bound to a non-loopback address). */
  readonly anyAddress: boolean;
  readonly checksHost: boolean;
  readonly checksOrigin: boolean;
}

const loopbackNames = ['localhost', '127.0.0.1', '[::1]'];
const wildcardAddresses = new Set(['0.0.0.0', '[::]']);

export function hostPolicy(options: HostPolicyOptions): HostPolicy {
  return {
    hosts: allowedHostNames(options),
    origins: new Set(options.allowedOrigins.flatMap((origin) => originOf(origin) ?? [])),
    anyAddress: !isLoopback(normalizeHostName(options.bindHost)),
    checksHost: !options.authenticated || options.allowedHosts.length > 0,
    checksOrigin:
      !options.authenticated || options.allowedHosts.length > 0 || options.allowedOrigins.length > 0,
  };
}

/** The header of the request that names a host or an origin the policy refuses, if one does. */
export function refusedHeader(
  policy: HostPolicy,
  headers: { host?: string | undefined; origin?: string | undefined },
): 'Host' | 'Origin' | undefined {
  const { host, origin } = headers;
  if (policy.checksHost && host !== undefined) {
    const name = hostNameOf(host);
    const accepted =
      name !== undefined && (policy.hosts.has(name) || (policy.anyAddress && isIpAddress(name)));
    if (!accepted) return 'Host';
  }
  if (policy.checksOrigin && origin !== undefined && !originAccepted(policy, origin, host)) return 'Origin';
  return undefined;
}

/** The host names a server answers to, lower case, IPv6 addresses in brackets (as in a Host header). */
export function allowedHostNames(options: Pick<HostPolicyOptions, 'bindHost' | 'allowedHosts'>): Set<string> {
  const names = new Set([...loopbackNames, ...options.allowedHosts.map(normalizeHostName)]);
  const bound = normalizeHostName(options.bindHost);
  if (!wildcardAddresses.has(bound)) names.add(bound);
  return names;
}

/** `host[:port]` or `[v6]:port` → the host name, normalized; undefined when it is neither. */
export function hostNameOf(authority: string): string | undefined {
  return authorityOf(authority)?.name;
}

/**
 * An origin as the config lists it, `scheme://host[:port]` with scheme http or https and nothing else (no
 * path, query, user or trailing slash beyond the root), in the form browsers send it (`URL.origin`: lower
 * case, default port left out); undefined when it is not one.
 */
export function originOf(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  if (url.pathname !== '/' || !/^https?:\/\/[^/?#]+\/?$/i.test(text)) return undefined;
  // A host a Host header could carry (no wildcard, no percent-encoding).
  return authorityOf(url.host) === undefined ? undefined : url.origin;
}

/**
 * The request's own origin (its `Host`, by http or by https: a TLS proxy in front changes the scheme, never
 * the host and port) or a listed one. `null` (a sandboxed frame, a file) and anything that is not an http(s)
 * origin are refused.
 */
function originAccepted(policy: HostPolicy, origin: string, host: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (policy.origins.has(url.origin)) return true;
  const own = host === undefined ? undefined : authorityOf(host);
  if (own === undefined) return false;
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  return (
    normalizeHostName(url.hostname) === own.name && (url.port || defaultPort) === (own.port ?? defaultPort)
  );
}

/** A Host header's name (normalized) and port (undefined when it gives none). */
function authorityOf(authority: string): { name: string; port: string | undefined } | undefined {
  // A DNS name or an IPv4 address (letters, digits, dots, hyphens, underscores), or [an IPv6 address]:
  // nothing else (a comma-joined list, spaces, userinfo) is a host.
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d*))?$/i.exec(authority.trim());
  if (match?.[1] === undefined) return undefined;
  const port = match[2] === undefined || match[2] === '' ? undefined : String(Number(match[2]));
  return { name: normalizeHostName(match[1]), port };
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
