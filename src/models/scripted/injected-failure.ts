import { STATUS_CODES } from 'node:http';
import { RatchetError } from '../../errors/index.js';
import type { ScriptedFailure, ScriptedReply } from './script-schema.js';

/** Attempt k (1-based) fails with `fail[k-1]`; attempts past the list reply normally. */
export function failureFor(reply: ScriptedReply, attempt: number): ScriptedFailure | undefined {
  return attempt >= 1 ? reply.fail?.[attempt - 1] : undefined;
}

/** The error a real provider adapter would throw for the matching API response. */
export function errorOf(failure: ScriptedFailure): Error {
  switch (failure.kind) {
    case 'rate_limit': {
      const retry = failure.retry_after_ms === undefined ? '' : `, retry after ${failure.retry_after_ms} ms`;
      return new RatchetError(
        'model_rate_limited',
        failure.message ?? `429 Too Many Requests (scripted)${retry}`,
        {
          retryAfterMs: failure.retry_after_ms,
          details: { status: 429 },
        },
      );
    }
    case 'server_error': {
      const status = failure.status ?? 500;
      return new RatchetError('model_server_error', failure.message ?? `${statusLine(status)} (scripted)`, {
        details: { status },
      });
    }
    case 'auth': {
      const status = failure.status ?? 401;
      return new RatchetError('model_auth_failed', failure.message ?? `${statusLine(status)} (scripted)`, {
        details: { status },
      });
    }
    case 'exception':
      return new Error(failure.message ?? 'scripted exception');
  }
}

function statusLine(status: number): string {
  const text = STATUS_CODES[status];
  return text === undefined ? String(status) : `${status} ${text}`;
}
