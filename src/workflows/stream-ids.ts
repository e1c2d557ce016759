/**
 * The largest Redis Stream id (both parts 2^64 - 1). Nothing can follow it, and Redis refuses an exclusive
 * range that starts there ("invalid start ID for the interval"): readers after it read nothing.
 */
export const largestStreamId = '18446744073709551615-18446744073709551615';

/**
 * Orders two Redis Stream ids (`<ms>-<seq>`, or `<ms>` meaning `<ms>-0` as Redis reads a start id):
 * negative when `a` comes first, 0 when equal, positive when `a` comes later. Numbers, not strings:
 * "9-0" comes before "10-0".
 */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = streamIdParts(a);
  const [bMs, bSeq] = streamIdParts(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}

function streamIdParts(id: string): [bigint, bigint] {
  const [ms = '0', seq = '0'] = id.split('-');
  return [BigInt(ms), BigInt(seq)];
}
