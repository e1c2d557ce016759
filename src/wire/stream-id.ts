/**
 * Event ids as clients send them back (`?after=`, `Last-Event-ID`): a Redis Stream id `<ms>-<seq>`, or a
 * bare `<ms>` (Redis reads it as `<ms>-0`), each part a decimal of at most 20 digits within 0..2^64-1.
 * Redis refuses anything else with "Invalid stream ID" — a 500 when it reached Redis — so the API checks
 * the range itself and answers 400.
 */
const streamIdPattern = /^(\d{1,20})(?:-(\d{1,20}))?$/;
const largestPart = 2n ** 64n - 1n;

/** What a valid event id looks like, for error messages. */
export const streamIdForm =
  '<milliseconds>-<sequence> or <milliseconds>, each 0 to 18446744073709551615, such as 1718000000000-0';

export function isStreamId(value: string): boolean {
  const match = streamIdPattern.exec(value);
  if (match === null) return false;
  const [, milliseconds = '', sequence] = match;
  return BigInt(milliseconds) <= largestPart && (sequence === undefined || BigInt(sequence) <= largestPart);
}
