import { errorBodySchema, type WireErrorCode } from '../wire/index.js';

/** What an error answer of the API carries: `{error: {code, message, details}}`. */
export interface RatchetErrorEnvelope {
  code: WireErrorCode;
  message: string;
  details: Record<string, unknown>;
}

/**
 * An error answer of the Ratchet API: its HTTP status and the wire envelope (docs/api.md#errors). An answer
 * that is not the envelope (a proxy's 502 page) gets the code its status means, and its text (cut) as the
 * message; `fromEnvelope` says which.
 */
export class RatchetApiError extends Error {
  readonly status: number;
  readonly code: WireErrorCode;
  readonly details: Record<string, unknown>;
  /** Seconds to wait before retrying, from `Retry-After` (503 `unavailable`), else null. */
  readonly retryAfterS: number | null;
  /** False when the answer was not the API's error envelope (something in between answered). */
  readonly fromEnvelope: boolean;

  constructor(
    status: number,
    error: RatchetErrorEnvelope,
    options: { retryAfterS?: number | null; fromEnvelope?: boolean } = {},
  ) {
    super(error.message);
    this.name = 'RatchetApiError';
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.retryAfterS = options.retryAfterS ?? null;
    this.fromEnvelope = options.fromEnvelope ?? true;
  }

  /** The wire envelope, as the server sent it. */
  get body(): { error: RatchetErrorEnvelope } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }

  /** `details.issues` of a 400: each invalid field with its location and path. */
  get issues(): Array<{ location: string; path: string; message: string }> {
    const issues = this.details.issues;
    return Array.isArray(issues)
      ? (issues as Array<{ location: string; path: string; message: string }>)
      : [];
  }
}

/** A success answer the client cannot read: not JSON, or not the shape of the route's response schema. */
export class RatchetResponseError extends Error {
  readonly status: number;
  readonly url: string;

  constructor(message: string, options: { status: number; url: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RatchetResponseError';
    this.status = options.status;
    this.url = options.url;
  }
}

const codeOfStatus: Record<number, WireErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
  500: 'internal',
  502: 'unavailable',
  503: 'unavailable',
  504: 'unavailable',
};

/** The error of a non-2xx answer; reads the body. */
export async function apiErrorOf(response: Response): Promise<RatchetApiError> {
  const text = await response.text().catch(() => '');
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const retryAfterS = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // Read leniently: a newer server may add fields to the envelope, never remove these.
  const envelope = errorBodySchema.shape.error.loose().safeParse((json as { error?: unknown })?.error);
  if (envelope.success) {
    const { code, message, details } = envelope.data;
    return new RatchetApiError(response.status, { code, message, details }, { retryAfterS });
  }
  const code = codeOfStatus[response.status] ?? (response.status >= 500 ? 'internal' : 'invalid_request');
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new RatchetApiError(
    response.status,
    {
      code,
      message: `HTTP ${response.status} from ${response.url}: ${excerpt || response.statusText}`,
      details: {},
    },
    { retryAfterS, fromEnvelope: false },
  );
}
