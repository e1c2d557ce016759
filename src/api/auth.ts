import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ApiToken } from '../config/index.js';
import { bearerToken, digest, matchingDigestIndex } from '../http/index.js';
import { ApiError } from './api-error.js';
import { runAsCaller } from './caller-scope.js';

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
 * `Authorization: Bearer <token>`, compared in constant time (src/http/bearer-token.ts). The rest of the
 * request then runs as the token's caller (caller-scope.ts): its tenant for a scoped token, an operator else.
 */
export function bearerAuth(tokens: readonly ApiToken[]) {
  const digests = tokens.map((entry) => digest(entry.token));
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const { config } = request.routeOptions;
    if (digests.length === 0 || config.public === true || config.withoutToken === true) {
      runAsCaller({ tenant: undefined }, done);
      return;
    }
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) {
      done(new ApiError('unauthorized', 'this API needs an Authorization: Bearer <token> header'));
      return;
    }
    const index = matchingDigestIndex(digests, presented);
    if (index < 0) {
      done(new ApiError('unauthorized', 'the bearer token is not valid'));
      return;
    }
    runAsCaller({ tenant: tokens[index]?.tenant }, done);
  };
}
