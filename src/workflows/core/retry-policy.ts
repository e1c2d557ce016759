import type { RatchetError } from '../../errors/index.js';

export interface RetrySettings {
  attempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/**
 * The one place where retryability decides what happens to a failed step attempt: retryable errors are
 * retried with exponential backoff (honouring a server's retry-after) until the attempts run out.
 * `attempt` is the number of the attempt that failed (1-based); `jitter` is in [0, 1).
 */
export function decideRetry(
  error: Pick<RatchetError, 'retryable' | 'retryAfterMs'>,
  attempt: number,
  settings: RetrySettings,
  jitter: number,
): RetryDecision {
  if (!error.retryable || attempt >= settings.attempts) return { retry: false };
  return { retry: true, delayMs: backoffDelay(attempt, settings, jitter, error.retryAfterMs) };
}

export function backoffDelay(
  attempt: number,
  settings: Pick<RetrySettings, 'backoffBaseMs' | 'backoffMaxMs'>,
  jitter: number,
  retryAfterMs?: number,
): number {
  const exponential = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** (attempt - 1));
  // Full jitter over the upper half keeps retries of many runs from arriving together.
  const delay = Math.round(exponential / 2 + (exponential / 2) * jitter);
  return Math.max(delay, retryAfterMs ?? 0);
}
