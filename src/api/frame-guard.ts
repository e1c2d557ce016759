import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';

/**
 * No answer of the API may be shown in another site's frame (clickjacking: a page frames /docs or the console
 * under a decoy and makes the user click "Execute" or "Cancel"). Every answer says so twice, for browsers that
 * read one or the other: `X-Frame-Options: DENY`, and `frame-ancestors 'none'` in its Content-Security-Policy,
 * added to the policy a route set for itself (the console's, the queue board's, Swagger UI's) or replacing a
 * weaker `frame-ancestors` there. Answers written past Fastify (event streams, MCP's transport) are not HTML.
 */
export function frameGuard(): onSendHookHandler {
  return async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', withoutFraming(reply.getHeader('content-security-policy')));
    return payload;
  };
}

/** The policy with `frame-ancestors 'none'` in place of any frame-ancestors it had. */
export function withoutFraming(policy: unknown): string {
  const directives = (typeof policy === 'string' ? policy : '')
    .split(';')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && !/^frame-ancestors(\s|$)/i.test(directive));
  return [...directives, "frame-ancestors 'none'"].join('; ');
}
