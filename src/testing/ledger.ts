import type { RedisClient } from '../redis/connection.js';
import { testLedgerKeys } from '../redis/keys.js';
import type { JsonValue } from '../tools/index.js';

/** One side effect in a ledger: what the tool said it did. */
export interface LedgerEntry {
  key: string;
  value: JsonValue;
}

/**
 * The outside world of a test, as the tools under test see it: each side effect a tool has on something
 * outside Ratchet (a charge, an e-mail, a row written) is recorded here, in Redis, so a test can count what
 * happened across worker processes that were killed. A crash test compares the ledger of each crashed run
 * with the ledger of the run without faults.
 *
 * Give the ledger to your tool the way you give it a real client: the test worker module receives it (see
 * `defineTestWorker`) and wraps it in a fake of the service your tool talks to.
 */
export interface Ledger {
  /**
   * Records one side effect. Every call counts, as a service without idempotency keys would count every
   * request: a tool that calls this again when its step is repeated has the effect twice.
   */
  record(key: string, value?: JsonValue): Promise<void>;
  /**
   * Records a side effect unless one was recorded under `key` already, as a service that deduplicates
   * requests by an idempotency key does (pass the tool context's `idempotencyKey`). Returns whether this
   * call recorded it.
   */
  recordOnce(key: string, value?: JsonValue): Promise<boolean>;
  /** Every side effect recorded so far: those of `record` in order, then those of `recordOnce`. */
  entries(): Promise<LedgerEntry[]>;
}

/** The ledger of the test engine whose key prefix is `prefix`, on a Redis client the caller owns. */
export function redisLedger(redis: RedisClient, prefix: string): Ledger {
  const keys = testLedgerKeys({ prefix });
  return {
    async record(key, value = null) {
      await redis.rpush(keys.effects, JSON.stringify({ key, value } satisfies LedgerEntry));
    },
    async recordOnce(key, value = null) {
      return (await redis.hsetnx(keys.once, key, JSON.stringify(value))) === 1;
    },
    async entries() {
      const [listed, once] = await Promise.all([redis.lrange(keys.effects, 0, -1), redis.hgetall(keys.once)]);
      return [
        ...listed.map((line) => JSON.parse(line) as LedgerEntry),
        ...Object.entries(once).map(([key, value]) => ({ key, value: JSON.parse(value) as JsonValue })),
      ];
    },
  };
}
