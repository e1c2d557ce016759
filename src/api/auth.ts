import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { bearerToken, digest, matchesDigest } from '../http/index.js';
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
 * `Authorization: Bearer <token>`, compared in constant time (src/http/bearer-token.ts).
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
