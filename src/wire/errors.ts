import { z } from 'zod';

/** Errors on the wire: the one error body of every endpoint, and its codes. */

/**
 * The wire family of error codes: what API clients see in `{error: {code, message, details}}`, each with
 * its HTTP status. Separate from the internal codes (src/errors/codes.ts), which say more than a client
 * needs (or should) know; the specific reason of a conflict travels in `details.reason`.
 */
export const wireErrorCodes = {
  /** The request is malformed: `details.issues` lists each invalid field. */
  invalid_request: 400,
  /** `api.tokens` is configured and the bearer token is missing or wrong. */
  unauthorized: 401,
  /**
   * The request's `Host` or `Origin` names a host the API does not answer to (DNS rebinding guard):
   * `details.header`.
   */
  forbidden: 403,
  /** The session, run, question, agent or route does not exist: `details.resource`. */
  not_found: 404,
  /** The request contradicts the current state: `details.reason`. */
  conflict: 409,
  /**
   * The request is well formed but cannot be carried out as asked: `details.reason` (idempotency_key_reused:
   * the idempotency key started another request's run, `details.idempotency_key`, `details.run_id`).
   */
  unprocessable: 422,
  /** The client sent its request too slowly (Node's `requestTimeout`). */
  request_timeout: 408,
  /** The body is larger than `api.body_limit_bytes`: `details.limit_bytes`. */
  payload_too_large: 413,
  /** A path segment (an id) is longer than `maxParamLength`: `details.issues`, `details.limit`. */
  uri_too_long: 414,
  /** The body is neither JSON nor absent: `details.issues` names the `content-type` header. */
  unsupported_media_type: 415,
  /** The request line and headers are larger than the server reads (Node's `maxHeaderSize`). */
  headers_too_large: 431,
  /** A fault of the server: the message is generic, `details.request_id` finds it in the logs. */
  internal: 500,
  /**
   * Redis does not answer (readiness, or any request while it is away or frozen), or the server follows
   * as many event streams as it may (`details.reason: too_many_followers`): retry after `Retry-After`.
   */
  unavailable: 503,
} as const;

export type WireErrorCode = keyof typeof wireErrorCodes;

export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(wireErrorCodes) as [WireErrorCode]),
      message: z.string(),
      /**
       * invalid_request: `issues` [{location, path, message}]; not_found: `resource`; conflict: `reason`
       * (session_busy with `active_run_id`, run_finished with `status`, question_closed); internal: `request_id`.
       */
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error', description: 'The one error shape of every endpoint.' });
export type ErrorBody = z.infer<typeof errorBodySchema>;
