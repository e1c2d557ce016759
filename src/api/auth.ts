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
    const presentedDigest = digest(presented);
    let accepted = false;
    for (const known of digests) accepted = timingSafeEqual(known, presentedDigest) || accepted;
    if (!accepted) throw new ApiError('unauthorized', 'the bearer token is not valid');
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
