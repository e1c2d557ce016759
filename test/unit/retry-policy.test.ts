import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/errors/index.js';
import { backoffDelay, decideRetry, type RetrySettings } from '../../src/workflows/core/retry-policy.js';

const settings: RetrySettings = { attempts: 5, backoffBaseMs: 1000, backoffMaxMs: 10_000 };
const retryable = { retryable: true, retryAfterMs: undefined };

describe('decideRetry', () => {
  it('a non-retryable error is not retried', () => {
    expect(decideRetry({ retryable: false, retryAfterMs: 5 }, 1, settings, 0)).toEqual({ retry: false });
    expect(decideRetry(new RatchetError('model_auth_failed', 'bad key'), 1, settings, 0)).toEqual({
      retry: false,
    });
  });

  it('a retryable error is retried until the attempts run out', () => {
    expect(decideRetry(retryable, 4, settings, 0).retry).toBe(true);
    expect(decideRetry(retryable, 5, settings, 0)).toEqual({ retry: false });
    expect(decideRetry(retryable, 6, settings, 0)).toEqual({ retry: false });
    expect(decideRetry(retryable, 1, { ...settings, attempts: 1 }, 0)).toEqual({ retry: false });
  });

  it('uses the retryable flag of RatchetError', () => {
    expect(decideRetry(new RatchetError('model_server_error', '502'), 1, settings, 0)).toEqual({
      retry: true,
      delayMs: 500,
    });
    // A provider may say a normally retryable error is permanent.
    expect(
      decideRetry(new RatchetError('model_server_error', '501', { retryable: false }), 1, settings, 0),
    ).toEqual({
      retry: false,
    });
  });

  it('honours retryAfterMs as a floor on the delay', () => {
    expect(decideRetry({ retryable: true, retryAfterMs: 7000 }, 1, settings, 0)).toEqual({
      retry: true,
      delayMs: 7000,
    });
    // A retry-after shorter than the backoff does not shorten it.
    expect(decideRetry({ retryable: true, retryAfterMs: 10 }, 3, settings, 0)).toEqual({
      retry: true,
      delayMs: 2000,
    });
    // retry-after wins over the max as well: the server knows best.
    expect(backoffDelay(1, settings, 0.5, 60_000)).toBe(60_000);
  });
});

describe('backoffDelay', () => {
  it('doubles with each attempt', () => {
    const upper = (attempt: number) => backoffDelay(attempt, settings, 1);
    expect([1, 2, 3, 4].map(upper)).toEqual([1000, 2000, 4000, 8000]);
    const lower = (attempt: number) => backoffDelay(attempt, settings, 0);
    expect([1, 2, 3, 4].map(lower)).toEqual([500, 1000, 2000, 4000]);
  });

  it('is capped by the max', () => {
    expect(backoffDelay(5, settings, 1)).toBe(10_000);
    expect(backoffDelay(30, settings, 0.999)).toBeLessThanOrEqual(10_000);
    expect(backoffDelay(30, settings, 0)).toBe(5000);
  });

  it('jitter spreads the delay over the upper half of the exponential value', () => {
    for (const jitter of [0, 0.1, 0.25, 0.5, 0.75, 0.999]) {
      const delay = backoffDelay(3, settings, jitter);
      expect(delay).toBeGreaterThanOrEqual(2000);
      expect(delay).toBeLessThanOrEqual(4000);
    }
    expect(backoffDelay(3, settings, 0.5)).toBe(3000);
    expect(backoffDelay(3, settings, 0.25)).toBeLessThan(backoffDelay(3, settings, 0.75));
  });

  it('returns whole milliseconds', () => {
    expect(Number.isInteger(backoffDelay(1, { backoffBaseMs: 3, backoffMaxMs: 100 }, 0.3333))).toBe(true);
  });
});
