import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Bearer tokens, for every listener that takes one (the API's `api.tokens`, a worker's metrics listener's
 * `telemetry.metrics.worker_token`). Tokens are compared as SHA-256 digests with timingSafeEqual, so neither
 * a token's content nor its length shows in the time an answer takes; every known token is compared.
 */

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** Whether `presented` is one of the values whose digests are known: in constant time, every one compared. */
export function matchesDigest(known: readonly Buffer[], presented: string): boolean {
  const presentedDigest = digest(presented);
  let accepted = false;
  for (const value of known) accepted = timingSafeEqual(value, presentedDigest) || accepted;
  return accepted;
}

/** Which of the known digests `presented` matches (-1: none): in constant time, every one compared. */
export function matchingDigestIndex(known: readonly Buffer[], presented: string): number {
  const presentedDigest = digest(presented);
  let found = -1;
  known.forEach((value, index) => {
    if (timingSafeEqual(value, presentedDigest)) found = index;
  });
  return found;
}

export function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
