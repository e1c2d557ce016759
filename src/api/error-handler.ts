import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../wire/index.js';
import { ApiError, internalError, toApiError, unavailableRetryAfterSeconds } from './api-error.js';

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

/** Sends an error in the one shape (for answers outside the error handler: Fastify's framework errors). */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
  if (error.code === 'unavailable') reply.header('retry-after', String(unavailableRetryAfterSeconds));
  const body: ErrorBody = { error: { code: error.code, message: error.message, details: error.details } };
  return reply.status(error.status).send(body);
}

/**
 * Node's own refusals, before Fastify has a request (request line and headers too large, a request sent too
 * slowly, bytes that are not HTTP): written on the socket in the one shape, then the socket is closed (its
 * stream may be anywhere in a request).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer: ApiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(
          'headers_too_large',
          `the request line and headers are larger than ${maxHeaderSize} bytes (a path or header too long)`,
          { limit_bytes: maxHeaderSize },
        )
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'the request was not received in time')
        : new ApiError('invalid_request', 'the request is not valid HTTP');
  const body = JSON.stringify({
    error: { code: answer.code, message: answer.message, details: answer.details },
  } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
