import { redactSecrets, redactSecretsIn } from '../secrets/index.js';
import { type ErrorCode, errorCodes } from './codes.js';

export interface RatchetErrorOptions {
  cause?: unknown;
  /** Overrides the code's default retryability (a provider may say a 500 is permanent). */
  retryable?: boolean;
  /** A server-provided hint (retry-after) for the next attempt. */
  retryAfterMs?: number;
  details?: Record<string, unknown>;
}

/** The internal error type: a stable code, a retryable flag and a cause. */
export class RatchetError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: RatchetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RatchetError';
    this.code = code;
    this.retryable = options.retryable ?? errorCodes[code].retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }
}

/** Maps anything thrown to a RatchetError; unknown errors are `internal` (retryable). */
export function toRatchetError(error: unknown): RatchetError {
  if (error instanceof RatchetError) return error;
  if (error instanceof Error) {
    if (isRedisConnectionError(error)) {
      return new RatchetError('redis_unavailable', error.message, { cause: error });
    }
    return new RatchetError('internal', error.message, { cause: error });
  }
  return new RatchetError('internal', String(error));
}

/**
 * The error with every registered secret removed from its message, stack and details: what may be recorded
 * (run records, events, BullMQ's failed reason) and logged. The same error when it holds no secret.
 */
export function withoutSecrets(error: RatchetError): RatchetError {
  const message = redactSecrets(error.message);
  const details = redactSecretsIn(error.details);
  if (message === error.message && details === error.details) return error;
  const clean = new RatchetError(error.code, message, {
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(details === undefined ? {} : { details }),
  });
  if (error.stack !== undefined) clean.stack = redactSecrets(error.stack);
  return clean;
}

/**
 * What ioredis throws when Redis is away, frozen or cut off: socket errors by code, and its own errors by
 * name or message (a bounded `maxRetriesPerRequest` gives MaxRetriesPerRequestError, whose message says
 * "max retries per request"; a `commandTimeout` gives "Command timed out"; a client without an offline
 * queue refuses commands while it reconnects).
 */
function isRedisConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'EPIPE' ||
    error.name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|max retries per request|Command timed out|Stream isn't writeable|LOADING|READONLY/i.test(
      error.message,
    )
  );
}
