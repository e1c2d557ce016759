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
  /** The entry's `base_url`, when it sets one: an endpoint that cannot be reached is named by it. */
  baseUrl?: string | undefined;
}

/**
 * The retries of a request whose connection could not be made (nothing listens at the address, the name does
 * not resolve, no route): 3 attempts, 0.5 s then 1 s apart (with jitter, at most 1.5 s in all). A server that
 * restarts is back by then; one that is not running, or a wrong base_url, fails the run within seconds,
 * saying so, instead of spending the backoff meant for a reply cut mid-stream. The entry's own
 * `rate_limit.max_retries` and `base_delay_ms` win when set.
 */
export const unreachableRetries = { max_attempts: 3, backoff_base_ms: 500 } as const;

/**
 * Maps what a provider package threw (or reported mid-stream) to a RatchetError that keeps the provider's
 * own message: 401/403 → model_auth_failed, 429 → model_rate_limited (retry-after honoured, rate-limit
 * headers in `details.rate_limit`), 408/409/5xx → model_server_error, other 4xx → model_request_invalid,
 * a body we could not read → model_bad_response, no HTTP reply → model_network_error (a connection that could
 * not be made at all says so, names the base_url, and is retried briefly: `unreachableRetries`). A chat the provider
 * package cannot express (an image type it does not take, ...) is model_request_invalid.
 */
export function providerErrorOf(error: unknown, provider: ProviderIdentity, now: number): RatchetError {
  const label = `${provider.kind} provider "${provider.name}"`;
  if (error instanceof RatchetError) return error;
  const status = APICallError.isInstance(error) ? error.statusCode : undefined;
  // No connection was made at all: no request reached the provider, nothing was billed.
  const unreachable = status === undefined ? unreachableCodeIn(error) : undefined;
  if (unreachable !== undefined) return unreachableError(error, provider, label, unreachable);
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

/** Why a connection could not be made, by the code Node or undici gives, as a person reads it. */
const unreachableCauses: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (DNS did not answer)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  EADDRNOTAVAIL: 'the address is not available on this machine',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out before it was made',
};

/** The code of a failure to connect in the cause chain (each of which happens before a byte is sent). */
function unreachableCodeIn(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let current = error; typeof current === 'object' && current !== null && !seen.has(current); ) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && Object.hasOwn(unreachableCauses, code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function unreachableError(
  error: unknown,
  provider: ProviderIdentity,
  label: string,
  code: string,
): RatchetError {
  const configured = provider.baseUrl === undefined ? undefined : shownUrl(provider.baseUrl);
  const requested = APICallError.isInstance(error) ? shownUrl(error.url) : undefined;
  const where =
    configured !== undefined
      ? `its base_url ${configured}`
      : `its default endpoint${requested === undefined ? '' : ` ${new URL(requested).origin}`}`;
  const fix =
    configured !== undefined
      ? 'check that the server is running there and that base_url is right'
      : 'check the network, or set base_url to reach it another way';
  return new RatchetError(
    'model_network_error',
    `${label}: cannot reach ${where}: ${unreachableCauses[code]} (${code}); ${fix}`,
    {
      cause: error,
      details: {
        ...identity(provider),
        reason: 'unreachable',
        ...(configured === undefined ? {} : { base_url: configured }),
        ...unreachableRetries,
      },
    },
  );
}

/** A URL without the parts that may hold a secret (user, password, query); undefined when it is none. */
function shownUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return undefined;
  }
}

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
