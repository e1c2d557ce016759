import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { RedisRateLimiter as RateLimiter } from '../../src/redis/rate-limiter.js';
import { defineScripts } from '../../src/redis/scripts.js';
import { deleteKeys } from '../helpers/harness.js';

let redis: Redis;
let limiter: RateLimiter;
const prefix = `t-rl-${randomBytes(4).toString('hex')}`;
const t0 = 1_800_000_000_000;
const reserve = (id: string, inputTokens = 10, outputTokens = 0) => ({ id, inputTokens, outputTokens });

beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'rate-limit-test' });
  defineScripts(redis);
  limiter = new RateLimiter(redis, { prefix, shards: 1 });
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await closeRedis(redis);
});

describe('the shared rate limiter', () => {
  it('admits rpm requests per sliding minute, then says when the oldest leaves the window', async () => {
    const limits = { rpm: 3, inputTpm: 0, outputTpm: 0 };
    for (const [index, at] of [0, 1000, 2000].entries()) {
      expect(await limiter.admit('rpm', limits, reserve(`r${index}`), t0 + at)).toEqual({ admitted: true });
    }
    expect(await limiter.admit('rpm', limits, reserve('r3'), t0 + 3000)).toEqual({
      admitted: false,
      waitMs: 57_001,
    });
    // Admitting the same reservation again is a no-op (a retried step).
    expect(await limiter.admit('rpm', limits, reserve('r2'), t0 + 3000)).toEqual({ admitted: true });
    expect(await limiter.admit('rpm', limits, reserve('r3'), t0 + 60_001)).toEqual({ admitted: true });
  });

  it('counts input tokens, and reconciles estimates with the reported usage', async () => {
    const limits = { rpm: 0, inputTpm: 100, outputTpm: 0 };
    expect(await limiter.admit('tpm', limits, reserve('a', 60), t0)).toEqual({ admitted: true });
    expect((await limiter.admit('tpm', limits, reserve('b', 60), t0 + 10)).admitted).toBe(false);
    // The reply said the first request used only 20 tokens: now the second fits.
    await limiter.settle('tpm', { reservationId: 'a', inputTokens: 20, outputTokens: 5, now: t0 + 15 });
    expect(await limiter.admit('tpm', limits, reserve('b', 60), t0 + 20)).toEqual({ admitted: true });
  });

  it('counts output tokens as the replies report them, and holds requests back once they fill the budget', async () => {
    const limits = { rpm: 0, inputTpm: 0, outputTpm: 100 };
    // A request reserves no output (its reply's length is unknown): it goes while the window has room.
    expect(await limiter.admit('otpm', limits, reserve('a'), t0)).toEqual({ admitted: true });
    await limiter.settle('otpm', { reservationId: 'a', inputTokens: 10, outputTokens: 60, now: t0 + 100 });
    expect(await limiter.admit('otpm', limits, reserve('b'), t0 + 200)).toEqual({ admitted: true });
    await limiter.settle('otpm', { reservationId: 'b', inputTokens: 10, outputTokens: 40, now: t0 + 300 });
    // 100 of 100 used: spent, so the next waits until the first reply's 60 leave the window (from its
    // completion).
    expect(await limiter.admit('otpm', limits, reserve('c'), t0 + 400)).toEqual({
      admitted: false,
      waitMs: 100 + 60_000 - 400 + 1,
    });
    expect(await limiter.admit('otpm', limits, reserve('c'), t0 + 60_101)).toEqual({ admitted: true });
  });

  it('counts a request from its completion, so latency never lets the provider see more than the limit', async () => {
    const limits = { rpm: 1, inputTpm: 0, outputTpm: 0 };
    expect(await limiter.admit('late', limits, reserve('slow'), t0)).toEqual({ admitted: true });
    await limiter.settle('late', { reservationId: 'slow', now: t0 + 1000 });
    expect(await limiter.admit('late', limits, reserve('next'), t0 + 60_000)).toEqual({
      admitted: false,
      waitMs: 1001,
    });
    expect(await limiter.admit('late', limits, reserve('next'), t0 + 61_001)).toEqual({ admitted: true });
  });

  it('admits a request larger than the budget alone into an empty window', async () => {
    const limits = { rpm: 0, inputTpm: 50, outputTpm: 0 };
    expect(await limiter.admit('big', limits, reserve('huge', 500), t0)).toEqual({ admitted: true });
    expect((await limiter.admit('big', limits, reserve('next', 1), t0 + 1)).admitted).toBe(false);
  });

  it('holds every request back during a cool-down (after a 429)', async () => {
    const limits = { rpm: 100, inputTpm: 0, outputTpm: 0 };
    await limiter.settle('cool', { holdUntil: t0 + 5000 });
    expect(await limiter.admit('cool', limits, reserve('x'), t0)).toEqual({ admitted: false, waitMs: 5000 });
    await limiter.settle('cool', { holdUntil: t0 + 1000 }); // never shortens a cool-down
    expect(await limiter.admit('cool', limits, reserve('x'), t0 + 4000)).toEqual({
      admitted: false,
      waitMs: 1000,
    });
    expect(await limiter.admit('cool', limits, reserve('x'), t0 + 5000)).toEqual({ admitted: true });
  });
});
