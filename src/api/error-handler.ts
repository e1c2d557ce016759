import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, internalError, toApiError, unavailableRetryAfterSeconds } from './api-error.js';
import type { ErrorBody } from './schemas.js';

/**
 * Every error answer goes through here: mapped once (toApiError), logged by its kind, sent in the one
 * shape. A server fault is logged with its cause and answered with a generic message and the request id.
 */
export function installErrorHandler(app: FastifyInstance, options: { bodyLimitBytes: number }): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toApiError(error, { bodyLimitBytes: options.bodyLimitBytes });
    if (mapped.isServerFault) {
      request.log.error({ err: error }, 'request failed');
      return sendError(reply, internalError(request.id));
    }
    if (mapped.code === 'unavailable') request.log.warn({ err: error }, 'request failed: unavailable');
    else request.log.debug({ code: mapped.code, message: mapped.message }, 'request refused');
    return sendError(reply, mapped);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply.status(404).send({
      error: {
        code: 'not_found',
        message: `no route ${request.method} ${path}`,
        details: { resource: 'route' },
      },
    } satisfies ErrorBody);
  });
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
  if (error.code === 'unavailable') reply.header('retry-after', String(unavailableRetryAfterSeconds));
  const body: ErrorBody = { error: { code: error.code, message: error.message, details: error.details } };
  return reply.status(error.status).send(body);
}
