import { describe, expect, it } from 'vitest';
import { rateLimitStatusOf, retryAfterMsOf } from '../../../src/models/providers/rate-limit-headers.js';

const now = Date.parse('2025-06-01T12:00:00.000Z');

describe('rateLimitStatusOf', () => {
  it("reads OpenAI's x-ratelimit headers; the reset is the later of the two durations", () => {
    expect(
      rateLimitStatusOf(
        {
          'x-ratelimit-limit-requests': '10000',
          'x-ratelimit-remaining-requests': '9999',
          'x-ratelimit-remaining-tokens': '1999000',
          'x-ratelimit-reset-requests': '6ms',
          'x-ratelimit-reset-tokens': '1m30.5s',
        },
        now,
      ),
    ).toEqual({ remainingRequests: 9999, remainingTokens: 1_999_000, resetMs: 90_500 });
  });

  it("reads Anthropic's anthropic-ratelimit headers with RFC 3339 reset times", () => {
    expect(
      rateLimitStatusOf(
        {
          'anthropic-ratelimit-requests-remaining': '3',
          'anthropic-ratelimit-requests-reset': '2025-06-01T12:00:20Z',
          'anthropic-ratelimit-tokens-remaining': '12000',
          'anthropic-ratelimit-tokens-reset': '2025-06-01T12:00:45Z',
        },
        now,
      ),
    ).toEqual({ remainingRequests: 3, remainingTokens: 12_000, resetMs: 45_000 });
  });

  it('without tokens-remaining, the lower of input and output tokens binds', () => {
    expect(
      rateLimitStatusOf(
        {
          'Anthropic-Ratelimit-Input-Tokens-Remaining': '400',
          'Anthropic-Ratelimit-Output-Tokens-Remaining': '9000',
        },
        now,
      ),
    ).toEqual({ remainingTokens: 400 });
  });

  it("when a budget is spent, the reset is that budget's", () => {
    expect(
      rateLimitStatusOf(
        {
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '1s',
          'x-ratelimit-remaining-tokens': '50000',
          'x-ratelimit-reset-tokens': '59s',
        },
        now,
      ),
    ).toEqual({ remainingRequests: 0, remainingTokens: 50_000, resetMs: 1000 });
  });

  it('a reset already past counts as 0; nothing known gives undefined', () => {
    expect(rateLimitStatusOf({ 'anthropic-ratelimit-requests-reset': '2025-06-01T11:59:00Z' }, now)).toEqual({
      resetMs: 0,
    });
    expect(rateLimitStatusOf({ 'content-type': 'application/json' }, now)).toBeUndefined();
    expect(rateLimitStatusOf({ 'x-ratelimit-remaining-requests': 'lots' }, now)).toBeUndefined();
    expect(rateLimitStatusOf(undefined, now)).toBeUndefined();
  });
});

describe('retryAfterMsOf', () => {
  it('prefers retry-after-ms, then retry-after in seconds, then retry-after as an HTTP date', () => {
    expect(retryAfterMsOf({ 'retry-after-ms': '250.5', 'retry-after': '9' }, now)).toBe(251);
    expect(retryAfterMsOf({ 'retry-after': '9' }, now)).toBe(9000);
    expect(retryAfterMsOf({ 'retry-after': 'Sun, 01 Jun 2025 12:00:30 GMT' }, now)).toBe(30_000);
  });

  it('ignores what it cannot read', () => {
    expect(retryAfterMsOf({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMsOf({ 'retry-after': '-5' }, now)).toBeUndefined();
    expect(retryAfterMsOf({}, now)).toBeUndefined();
  });
});
