import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from './api-error.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers without a bearer token (health checks). */
    public?: boolean;
    /**
     * The route answers without a bearer token but stays behind the host guard: files that hold no data
     * (the console's page, script and style), which a browser fetches on navigation, without a header.
     */
    withoutToken?: boolean;
  }
}

/**
 * The bearer-token check: with `api.tokens` configured, every route that is not public needs
 * `Authorization: Bearer <token>`. Tokens are compared as SHA-256 digests with timingSafeEqual, so neither
 * a token's content nor its length shows in the time an answer takes; every configured token is compared.
 */
export function bearerAuth(tokens: readonly string[]): onRequestHookHandler {
  const digests = tokens.map(digest);
  return async (request: FastifyRequest) => {
    const { config } = request.routeOptions;
    if (digests.length === 0 || config.public === true || config.withoutToken === true) return;
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) {
      throw new ApiError('unauthorized', 'this API needs an Authorization: Bearer <token> header');
    }
    if (!matchesDigest(digests, presented))
      throw new ApiError('unauthorized', 'the bearer token is not valid');
  };
}

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

export function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
