import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from './api-error.js';
import { describeValidationIssues } from './validation-issues.js';

/** The methods that change something: every route that takes one is behind the guard. */
const changingMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every request that changes something says `content-type: application/json`, with a JSON body or none (an
 * empty body is no body: `installJsonBodyParser`). A page of another origin can send a form post or a
 * `no-cors` fetch with `text/plain`, `multipart/form-data` or `application/x-www-form-urlencoded`, or with
 * no body at all, without asking the server first; to send `application/json` the browser must ask first (a
 * CORS preflight), which this API never grants. So a body-less POST (cancel, retry, a session with defaults)
 * cannot be forged from another origin even where the `Origin` check is off (with tokens) or a browser omits
 * `Origin`. Refused with 415 naming the header, before the body is read and before anything happens.
 */
export function jsonContentTypeGuard(): onRequestHookHandler {
  return async (request: FastifyRequest) => {
    // Routes that answer without a token check requests their own way: the console's files take GET only,
    // and the queue board refuses every write itself (403 read_only), which says more.
    if (!changingMethods.has(request.method) || request.routeOptions.config.withoutToken === true) return;
    if (mediaTypeOf(request.headers['content-type']) === 'application/json') return;
    const issues = [
      {
        location: 'headers',
        path: 'content-type',
        message:
          `${request.method} needs content-type: application/json, with a JSON body or none (a guard ` +
          'against requests from other sites)',
      },
    ];
    throw new ApiError('unsupported_media_type', describeValidationIssues(issues), { issues });
  };
}

/** `application/json; charset=utf-8` → `application/json`; undefined when there is no header. */
function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]?.trim().toLowerCase();
}
