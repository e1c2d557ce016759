import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  NoContentGeneratedError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { type ErrorCode, RatchetError } from '../../errors/index.js';
import { rateLimitStatusOf, retryAfterMsOf } from './rate-limit-headers.js';

/** Which provider entry failed: every message names it. */
export interface ProviderIdentity {
  name: string;
  kind: string;
}

/**
 * Maps what a provider package threw (or reported mid-stream) to a RatchetError that keeps the provider's
 * own message: 401/403 → model_auth_failed, 429 → model_rate_limited (retry-after honoured, rate-limit
 * headers in `details.rate_limit`), 408/409/5xx → model_server_error, other 4xx → model_request_invalid,
 * a body we could not read → model_bad_response, no HTTP reply → model_network_error. A chat the provider
 * package cannot express (an image type it does not take, ...) is model_request_invalid.
 */
export function providerErrorOf(error: unknown, provider: ProviderIdentity, now: number): RatchetError {
  const label = `${provider.kind} provider "${provider.name}"`;
  if (error instanceof RatchetError) return error;
  const status = APICallError.isInstance(error) ? error.statusCode : undefined;
  // A connection that broke while the body streamed in: the packages report it with the 200 it began with.
  if ((status === undefined || status < 300) && brokenConnectionIn(error)) {
    return new RatchetError('model_network_error', `${label}: the connection broke: ${messageOf(error)}`, {
      cause: error,
      details: identity(provider),
    });
  }
  if (APICallError.isInstance(error)) return apiCallErrorOf(error, provider, label, now);
  if (
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) ||
    NoContentGeneratedError.isInstance(error)
  ) {
    return new RatchetError('model_bad_response', `${label}: unreadable reply: ${error.message}`, {
      cause: error,
      details: identity(provider),
    });
  }
  if (
    UnsupportedFunctionalityError.isInstance(error) ||
    InvalidPromptError.isInstance(error) ||
    InvalidArgumentError.isInstance(error)
  ) {
    return new RatchetError('model_request_invalid', `${label}: ${error.message}`, {
      cause: error,
      details: identity(provider),
    });
  }
  if (LoadAPIKeyError.isInstance(error)) {
    return new RatchetError('model_auth_failed', `${label}: ${error.message}`, {
      cause: error,
      details: identity(provider),
    });
  }
  if (isStreamError(error)) return streamErrorOf(error, provider, label);
  return new RatchetError('model_error', `${label}: ${messageOf(error)}`, {
    cause: error,
    details: identity(provider),
  });
}

const socketErrorCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Whether a socket failure (Node's fetch: "terminated", UND_ERR_SOCKET, ECONNRESET, ...) is in the cause chain. */
function brokenConnectionIn(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current = error; typeof current === 'object' && current !== null && !seen.has(current); ) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('UND_ERR') || socketErrorCodes.has(code))) return true;
    if (
      current instanceof TypeError &&
      (current.message === 'terminated' || current.message === 'fetch failed')
    ) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The error's message, with its cause's when that says more. */
function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error ? error.cause : undefined;
  const detail = cause instanceof Error ? messageOf(cause) : undefined;
  return detail === undefined || message.includes(detail) ? message : `${message} (${detail})`;
}

function apiCallErrorOf(
  error: APICallError,
  provider: ProviderIdentity,
  label: string,
  now: number,
): RatchetError {
  const status = error.statusCode;
  if (status === undefined) {
    return new RatchetError('model_network_error', `${label}: ${error.message}`, {
      cause: error,
      details: identity(provider),
    });
  }
  const code = codeForStatus(status);
  const headers = error.responseHeaders;
  const rateLimit = rateLimitStatusOf(headers, now);
  const retryAfterMs = code === 'model_auth_failed' ? undefined : retryAfterMsOf(headers, now);
  const details: Record<string, unknown> = { ...identity(provider), status };
  if (rateLimit !== undefined) details.rate_limit = rateLimit;
  const what = code === 'model_bad_response' ? 'unreadable reply' : `HTTP ${status}`;
  return new RatchetError(code, `${label}: ${what}: ${error.message}`, {
    cause: error,
    retryAfterMs,
    details,
  });
}

function codeForStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return 'model_auth_failed';
  if (status === 429) return 'model_rate_limited';
  if (status === 408 || status === 409 || status >= 500) return 'model_server_error';
  if (status >= 400) return 'model_request_invalid';
  // A success status whose body could not be read or parsed.
  return 'model_bad_response';
}

/** An error a provider package reports inside a stream (Anthropic's `overloaded_error` event, ...). */
interface StreamError {
  message: string;
  type?: string;
  statusCode?: number;
}

function isStreamError(error: unknown): error is StreamError {
  return (
    typeof error === 'object' &&
    error !== null &&
    !(error instanceof Error) &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

function streamErrorOf(error: StreamError, provider: ProviderIdentity, label: string): RatchetError {
  const status = typeof error.statusCode === 'number' ? error.statusCode : undefined;
  const code =
    status !== undefined
      ? codeForStatus(status)
      : error.type?.includes('rate_limit')
        ? 'model_rate_limited'
        : 'model_server_error';
  const type = error.type === undefined ? '' : ` (${error.type})`;
  return new RatchetError(code, `${label}: error in the stream${type}: ${error.message}`, {
    details: { ...identity(provider), ...(status === undefined ? {} : { status }) },
  });
}

function identity(provider: ProviderIdentity): Record<string, unknown> {
  return { provider: provider.name, kind: provider.kind };
}
