import { type ErrorCode, RatchetError, toRatchetError } from '../errors/index.js';
import { type WireErrorCode, wireErrorCodes } from '../wire/index.js';
import { describeValidationIssues, validationIssues } from './validation-issues.js';

/** The `Retry-After` (seconds) of every `unavailable` answer. */
export const unavailableRetryAfterSeconds = 5;

/** An error the API answers with: a wire code (hence a status), a client-safe message, details. */
export class ApiError extends Error {
  readonly code: WireErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: WireErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return wireErrorCodes[this.code];
  }

  /** A server fault: its cause is logged, never sent. */
  get isServerFault(): boolean {
    return this.status >= 500 && this.code !== 'unavailable';
  }
}

type InternalMapping = { code: WireErrorCode; details?: Record<string, unknown> } | 'internal';

/**
 * What each internal code means on the wire. Every code needs a decision here (the type checker says so
 * when one is added); `internal` ones are server faults whose message is not shown.
 */
const internalCodes: Record<ErrorCode, InternalMapping> = {
  run_not_found: { code: 'not_found', details: { resource: 'run' } },
  session_not_found: { code: 'not_found', details: { resource: 'session' } },
  agent_not_found: { code: 'not_found', details: { resource: 'agent' } },
  question_not_found: { code: 'not_found', details: { resource: 'question' } },
  approval_not_found: { code: 'not_found', details: { resource: 'approval' } },
  schedule_not_found: { code: 'not_found', details: { resource: 'schedule' } },
  schedule_exists: { code: 'conflict', details: { reason: 'schedule_exists' } },
  session_busy: { code: 'conflict', details: { reason: 'session_busy' } },
  run_finished: { code: 'conflict', details: { reason: 'run_finished' } },
  queue_full: { code: 'conflict', details: { reason: 'queue_full' } },
  queued_message_not_found: { code: 'not_found', details: { resource: 'queued_message' } },
  steer_unsupported: { code: 'conflict', details: { reason: 'steer_unsupported' } },
  run_not_retryable: { code: 'conflict', details: { reason: 'run_not_retryable' } },
  run_not_forkable: { code: 'conflict', details: { reason: 'run_not_forkable' } },
  question_closed: { code: 'conflict', details: { reason: 'question_closed' } },
  signals_full: { code: 'conflict', details: { reason: 'signals_full' } },
  invalid_response: { code: 'invalid_request' },
  idempotency_key_reused: { code: 'unprocessable', details: { reason: 'idempotency_key_reused' } },
  invalid_run_settings: { code: 'invalid_request' },
  redis_unavailable: { code: 'unavailable' },
  shutting_down: { code: 'unavailable' },
  too_many_followers: { code: 'unavailable', details: { reason: 'too_many_followers' } },
  // An API older than the worker that wrote the record (a rolling deploy): asking again reaches a newer one.
  record_too_new: { code: 'unavailable', details: { reason: 'record_too_new' } },
  config_invalid: 'internal',
  record_invalid: 'internal',
  suspended: 'internal',
  max_iterations: 'internal',
  budget_exceeded: 'internal',
  max_rounds: 'internal',
  member_failed: 'internal',
  coordinator_invalid: 'internal',
  step_stalled: 'internal',
  deadline_exceeded: 'internal',
  context_exceeded: 'internal',
  guardrail_failed: 'internal',
  contract_violated: 'internal',
  effect_failed: 'internal',
  middleware_failed: 'internal',
  contract_rule_failed: 'internal',
  middleware_refused: 'internal',
  model_rate_limited: 'internal',
  model_server_error: 'internal',
  model_network_error: 'internal',
  model_bad_response: 'internal',
  model_auth_failed: 'internal',
  model_request_invalid: 'internal',
  model_error: 'internal',
  model_stalled: 'internal',
  model_timeout: 'internal',
  reply_too_large: 'internal',
  entry_too_large: 'internal',
  script_exhausted: 'internal',
  lock_lost: 'internal',
  cancelled: 'internal',
  internal: 'internal',
};

/** Fastify's own client errors (bad JSON, body too large, unknown media type …), by status. */
const clientStatusCodes: Record<number, WireErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

const genericInternalMessage = 'internal server error';

/**
 * The one mapping of anything thrown while answering a request to what the client sees: our ApiErrors as
 * they are, the engine's RatchetErrors by their code, Fastify's request errors (validation, body limit,
 * parsing) by kind, and everything else as a generic `internal` error.
 */
export function toApiError(error: unknown, options: { bodyLimitBytes?: number } = {}): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RatchetError) return fromRatchetError(error);
  const fastifyError = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    statusCode?: unknown;
    validation?: unknown;
    validationContext?: unknown;
    message?: unknown;
  };
  if (Array.isArray(fastifyError.validation)) {
    const location = typeof fastifyError.validationContext === 'string' ? fastifyError.validationContext : '';
    const issues = fastifyError.validation.flatMap((issue) => validationIssues(issue, location));
    return new ApiError('invalid_request', describeValidationIssues(issues), { issues });
  }
  const framework = frameworkError(fastifyError.code, fastifyError.message);
  if (framework) return framework;
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const issues = [
      {
        location: 'body',
        path: '',
        message: `larger than ${options.bodyLimitBytes ?? 'the limit of'} bytes (api.body_limit_bytes)`,
      },
    ];
    return new ApiError(
      'payload_too_large',
      `the request body is larger than ${options.bodyLimitBytes ?? 'the limit of'} bytes`,
      { issues, ...(options.bodyLimitBytes === undefined ? {} : { limit_bytes: options.bodyLimitBytes }) },
    );
  }
  const status = typeof fastifyError.statusCode === 'number' ? fastifyError.statusCode : 500;
  const fromFastify = typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_');
  if (fromFastify && status >= 400 && status < 500 && typeof fastifyError.message === 'string') {
    // Fastify's client errors (bad JSON, media type …) say what is wrong with the request, nothing about
    // the server. Anything else with a status (some library's error) stays a server fault.
    return new ApiError(clientStatusCodes[status] ?? 'invalid_request', fastifyError.message);
  }
  return fromRatchetError(toRatchetError(error));
}

/**
 * A path segment longer than this is refused by the router (414) before anything reads it. Ids are far
 * shorter and their schemas say so (`params.id`, at most 200 characters, is a 400 naming the field); the
 * router's own limit only bounds what it decodes.
 */
export const maxParamLength = 1000;

/**
 * Fastify's own refusals that come before a route is known (the URL) or concern the request as a whole (its
 * media type, its JSON), with the field at fault named as validation issues name it.
 */
function frameworkError(code: unknown, message: unknown): ApiError | undefined {
  const text = typeof message === 'string' ? message : 'invalid request';
  const refuse = (
    wireCode: WireErrorCode,
    issue: { location: string; path: string; message: string },
    details: Record<string, unknown> = {},
  ) => new ApiError(wireCode, describeValidationIssues([issue]), { issues: [issue], ...details });
  switch (code) {
    case 'FST_ERR_BAD_URL':
      return refuse('invalid_request', {
        location: 'path',
        path: '',
        message: 'malformed percent-encoding (a "%" must be followed by two hex digits of valid UTF-8)',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return refuse(
        'uri_too_long',
        { location: 'path', path: '', message: `a path segment is longer than ${maxParamLength} characters` },
        { limit: maxParamLength },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return refuse('unsupported_media_type', {
        location: 'headers',
        path: 'content-type',
        message: 'send application/json, or no body',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return refuse('invalid_request', { location: 'headers', path: 'content-length', message: text });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return refuse('invalid_request', { location: 'body', path: '', message: text });
    default:
      return undefined;
  }
}

function fromRatchetError(error: RatchetError): ApiError {
  const mapping = internalCodes[error.code];
  if (mapping === 'internal') return new ApiError('internal', genericInternalMessage);
  if (mapping.code === 'unavailable') {
    // The cause (a Redis error) says nothing a client can act on; the reason, when there is one, does.
    return new ApiError(
      'unavailable',
      'the service is temporarily unavailable; retry later',
      mapping.details ?? {},
    );
  }
  if (error.code === 'invalid_run_settings') return runSettingsRefusal(error);
  return new ApiError(mapping.code, error.message, { ...error.details, ...mapping.details });
}

/**
 * A per-run setting above its agent's limit (max_iterations, timeout_s, budget.*): an invalid field of the
 * body like any other, with the limit beside it (null: the agent takes no such setting).
 */
function runSettingsRefusal(error: RatchetError): ApiError {
  const field = typeof error.details?.field === 'string' ? error.details.field : '';
  const limit = error.details?.limit ?? null;
  const message = error.message.startsWith(`${field}: `)
    ? error.message.slice(field.length + 2)
    : error.message;
  const issues = [{ location: 'body', path: field, message }];
  return new ApiError('invalid_request', error.message, { issues, limit });
}

/** The message of a 500: the same for every fault. */
export function internalError(requestId: string): ApiError {
  return new ApiError('internal', genericInternalMessage, { request_id: requestId });
}
