import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/redis/connection.js';
import { runExample } from '../helpers/run-example.js';

// examples/cheap-router-middleware.ts, run as a user runs it against the test Redis under a key prefix of
// its own, removed afterwards.
const redisUrl = inject('redisUrl');
const prefix = `t-example-${randomBytes(6).toString('hex')}`;

async function keysOf(redis: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

let redis: RedisClient | undefined;
afterEach(async () => {
  if (!redis) return;
  const keys = await keysOf(redis, `${prefix}:*`);
  if (keys.length > 0) await redis.unlink(...keys);
  await closeRedis(redis);
});

describe('examples/cheap-router-middleware.ts', () => {
  it('sends the short request to the small model and the long one to the large, and records each choice', async () => {
    const { code, stdout, stderr } = await runExample('cheap-router-middleware.ts', {
      env: { REDIS_URL: redisUrl, RATCHET_PREFIX: prefix },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'completed by small/small-model: 4',
      'completed by large/large-model: A long answer from the large model.',
    ]);
    // The choice is in each reply's journal entry, where a repeated step reads it.
    redis = createRedis({ url: redisUrl, logger: silentLogger(), name: 'example-check' });
    const journals = await keysOf(redis, `${prefix}:*:journal`);
    const entries = await Promise.all(
      journals.map(async (key) => JSON.parse((await redis?.hget(key, 'reply:1')) ?? 'null')),
    );
    const choices = entries.map((entry) => ({ model: entry.model, middleware: entry.middleware }));
    expect(choices).toHaveLength(2);
    expect(choices).toContainEqual({
      model: { provider: 'small', model: 'small-model' },
      middleware: [{ name: 'cheap_router', note: { chose: 'cheap', chars: 29 }, routed_to: 'small' }],
    });
    expect(choices).toContainEqual({
      model: { provider: 'large', model: 'large-model' },
      middleware: [{ name: 'cheap_router', note: { chose: 'default', chars: expect.any(Number) } }],
    });
  });
});
