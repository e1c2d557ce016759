import { isIPv4, isIPv6 } from 'node:net';

/** What kind of destination an address is; only `public` is reachable without being allowed. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (carrier-grade NAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

type Range = readonly [network: bigint, prefixLength: number, kind: AddressKind];

const ipv4Ranges: readonly Range[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared (carrier-grade NAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'reserved'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('198.51.100.0', 24, 'reserved'),
  v4('203.0.113.0', 24, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const ipv6Ranges: readonly Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('64:ff9b:1::', 48, 'private'),
  v6('100::', 64, 'reserved'),
  v6('2001::', 32, 'reserved'),
  v6('2001:10::', 28, 'reserved'),
  v6('2001:db8::', 32, 'reserved'),
  v6('fc00::', 7, 'private'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'private'),
  v6('ff00::', 8, 'multicast'),
];

/** IPv6 ranges that carry an IPv4 address: the embedded address decides. [network, prefix, bit offset]. */
const ipv4Carriers: readonly (readonly [bigint, number, number])[] = [
  [parseIPv6('::ffff:0:0') as bigint, 96, 0], // IPv4-mapped
  [parseIPv6('::ffff:0:0:0') as bigint, 96, 0], // IPv4-translated
  [parseIPv6('64:ff9b::') as bigint, 96, 0], // NAT64
  [parseIPv6('::') as bigint, 96, 0], // IPv4-compatible (deprecated)
  [parseIPv6('2002::') as bigint, 16, 80], // 6to4: the IPv4 address follows the prefix
];

/** Classifies an IPv4 or IPv6 address (IPv6 may carry a zone, `fe80::1%eth0`); throws for anything else. */
export function classifyAddress(address: string): AddressKind {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(plain)) return classifyIPv4(parseIPv4(plain));
  const value = isIPv6(plain) ? parseIPv6(plain) : undefined;
  if (value === undefined) throw new Error(`"${address}" is not an IP address`);
  for (const [network, prefixLength, shift] of ipv4Carriers) {
    if (inRange(value, network, prefixLength, 128)) {
      const embedded = (value >> BigInt(shift)) & 0xffffffffn;
      // `::` and `::1` are themselves, not IPv4-compatible forms of 0.0.0.0 and 0.0.0.1.
      if (network === 0n && embedded <= 1n) break;
      return classifyIPv4(embedded);
    }
  }
  const kind = kindIn(ipv6Ranges, value, 128);
  if (kind !== undefined) return kind;
  // Global unicast is 2000::/3; everything else is not assigned for use on the Internet.
  return value >> 125n === 1n ? 'public' : 'reserved';
}

function classifyIPv4(value: bigint): AddressKind {
  return kindIn(ipv4Ranges, value, 32) ?? 'public';
}

function kindIn(ranges: readonly Range[], value: bigint, bits: number): AddressKind | undefined {
  return ranges.find(([network, prefixLength]) => inRange(value, network, prefixLength, bits))?.[2];
}

function inRange(value: bigint, network: bigint, prefixLength: number, bits: number): boolean {
  const shift = BigInt(bits - prefixLength);
  return value >> shift === network >> shift;
}

function parseIPv4(text: string): bigint {
  return text.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** The 128-bit value of an IPv6 address (with `::` and a trailing dotted IPv4 part); undefined if invalid. */
function parseIPv6(text: string): bigint | undefined {
  let groups = text;
  let tail: bigint[] = [];
  if (text.includes('.')) {
    const lastColon = text.lastIndexOf(':');
    const dotted = text.slice(lastColon + 1);
    if (!isIPv4(dotted)) return undefined;
    const ipv4 = parseIPv4(dotted);
    tail = [ipv4 >> 16n, ipv4 & 0xffffn];
    groups = text.slice(0, lastColon + 1);
    if (!groups.endsWith('::')) groups = groups.slice(0, -1);
  }
  const [head, rest] = groups.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => BigInt(`0x${group}`)));
  const left = parse(head);
  const right = [...parse(rest ?? ''), ...tail];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (rest === undefined && missing !== 0)) return undefined;
  const all = [...left, ...Array<bigint>(missing).fill(0n), ...right];
  return all.reduce((value, group) => (value << 16n) | group, 0n);
}

function v4(address: string, prefixLength: number, kind: AddressKind): Range {
  return [parseIPv4(address), prefixLength, kind];
}

function v6(address: string, prefixLength: number, kind: AddressKind): Range {
  return [parseIPv6(address) as bigint, prefixLength, kind];
}
