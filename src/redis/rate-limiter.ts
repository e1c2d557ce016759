import type { Admission, RateLimiter, RateLimits } from '../workflows/steps/runner/rate-limiter.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, type RateLimitKeys, rateLimitKeys, tenantBudgetKeys } from './keys.js';
import { runScript } from './scripts.js';

/**
 * Limits shared by every worker process and machine, per provider (one API key and model): requests and
 * input/output tokens per sliding minute, and a cool-down that holds everyone back after a 429. The limits
 * are kept by the rate-limit Lua scripts beside this file.
 */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly space: KeySpace,
  ) {}

  async admit(
    provider: string,
    limits: RateLimits,
    reservation: { id: string; inputTokens: number; outputTokens: number },
    now: number,
  ): Promise<Admission> {
    const keys = keysOf(this.space, provider);
    const [code, wait] = await runScript(
      this.redis,
      'rate-limit-admit',
      [keys.reservations, keys.tokens, keys.state],
      [
        now,
        limits.rpm,
        limits.inputTpm,
        limits.outputTpm,
        reservation.id,
        reservation.inputTokens,
        reservation.outputTokens,
        limits.windowMs ?? 60_000,
        limits.totalTpm ?? 0,
      ],
    );
    return code === 'OK' ? { admitted: true } : { admitted: false, waitMs: Number(wait) };
  }

  async settle(provider: string, settlement: Parameters<RateLimiter['settle']>[1]): Promise<void> {
    const keys = keysOf(this.space, provider);
    await runScript(
      this.redis,
      'rate-limit-settle',
      [keys.reservations, keys.tokens, keys.state],
      [
        settlement.reservationId ?? '',
        settlement.inputTokens ?? 0,
        settlement.outputTokens ?? 0,
        settlement.holdUntil ?? 0,
        settlement.now ?? Date.now(),
      ],
    );
  }
}

/** A tenant's budget is limited as `tenant:<name>` (decision 0038), under keys of its own; else a provider. */
function keysOf(space: KeySpace, limited: string): RateLimitKeys {
  return limited.startsWith('tenant:')
    ? tenantBudgetKeys(space, limited.slice('tenant:'.length))
    : rateLimitKeys(space, limited);
}
