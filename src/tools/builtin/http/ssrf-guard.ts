import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { untilAborted } from '../../../errors/index.js';
import { classifyAddress } from './ip-ranges.js';

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface DestinationPolicy {
  /** When not empty, the only hosts allowed (exact names, or `*.domain` for its subdomains). */
  allowHosts: readonly string[];
  /** Hosts allowed to resolve to loopback, private or link-local addresses. */
  privateHosts: readonly string[];
  /** Every host may resolve to such addresses. */
  allowPrivate: boolean;
  /** Where these settings live, for error messages (default `tools.http`). */
  section?: string;
}

/** A checked destination: the addresses to connect to, and nothing else. */
export interface Destination {
  hostname: string;
  addresses: LookupAddress[];
}

/**
 * Checks one hop of a request before it is sent: the host against the allow-list, then every address it
 * resolves to (an IP literal is its own address). The caller must connect only to the returned addresses
 * (see pinnedLookup), so a DNS answer that changes between this check and the connection cannot reach a
 * refused address. Throws an error saying what was refused and which setting allows it.
 */
export async function checkDestination(
  url: URL,
  policy: DestinationPolicy,
  resolve: Resolver,
  signal: AbortSignal,
): Promise<Destination> {
  const hostname = normalizeHost(url.hostname);
  const section = policy.section ?? 'tools.http';
  if (policy.allowHosts.length > 0 && !policy.allowHosts.some((pattern) => hostMatches(hostname, pattern))) {
    throw new Error(
      `url: host "${hostname}" is not in ${section}.allow_hosts (${policy.allowHosts.join(', ')})`,
    );
  }
  const family = isIP(hostname);
  const addresses =
    family === 0
      ? await untilAborted(resolveHost(hostname, resolve), signal) /* a DNS lookup cannot be cancelled */
      : [{ address: hostname, family }];
  const trusted = policy.allowPrivate || policy.privateHosts.some((host) => normalizeHost(host) === hostname);
  if (!trusted) {
    for (const { address } of addresses) {
      const kind = classifyAddress(address);
      if (kind === 'public') continue;
      const via = address === hostname ? '' : ` resolves to ${address}, which`;
      throw new Error(
        `url: "${hostname}"${via} is a ${kind} address; requests to loopback, private, link-local and ` +
          `reserved addresses are refused (list the host in ${section}.private_hosts to allow it)`,
      );
    }
  }
  return { hostname, addresses };
}

/** A `lookup` for net/http that answers with the checked addresses only, never asking DNS again. */
export function pinnedLookup(destination: Destination) {
  return (
    _hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const [first] = destination.addresses;
    if (options.all) callback(null, destination.addresses);
    else if (first) callback(null, first.address, first.family);
    else callback(new Error(`no address for ${destination.hostname}`), '', 0);
  };
}

/** Lower case, without IPv6 brackets or a trailing dot. */
export function normalizeHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

function hostMatches(hostname: string, pattern: string): boolean {
  const normalized = normalizeHost(pattern);
  if (normalized.startsWith('*.')) return hostname.endsWith(normalized.slice(1));
  return hostname === normalized;
}

async function resolveHost(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(hostname);
  } catch (error) {
    throw new Error(`url: cannot resolve host "${hostname}": ${(error as Error).message}`, { cause: error });
  }
  if (addresses.length === 0) throw new Error(`url: host "${hostname}" has no address`);
  return addresses;
}
