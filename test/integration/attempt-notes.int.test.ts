import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { chatKey, chatViewKey, jobLockKey, type KeySpace, runKeys } from '../../src/redis/keys.js';
import { defineScripts, runScript } from '../../src/redis/scripts.js';
import { newRunId, newSessionId } from '../../src/workflows/ids.js';
import {
  type AttemptStart,
  attemptsEntrySchema,
  attemptsKept,
  journalField,
} from '../../src/workflows/journal.js';
import { deleteKeys } from '../helpers/harness.js';

// The attempts record of a step job (decision 0019), written by the scripts each execution runs first
// (load-iteration) and marked by the park (mark-parked), driven directly as a worker would.
let redis: Redis;
const space: KeySpace = { prefix: `t-attempts-${randomBytes(4).toString('hex')}`, shards: 1 };

beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'attempts-test' });
  defineScripts(redis);
});
afterAll(async () => {
  await deleteKeys(redis, space.prefix);
  await closeRedis(redis);
});

function place() {
  const sessionId = newSessionId();
  const runId = newRunId(sessionId);
  const keys = runKeys(space, sessionId, runId);
  const chat = chatKey(space, sessionId, 'main');
  const jobId = `${runId}-i1`;
  const field = journalField.attempts(jobId);
  const load = (note: AttemptStart | '') =>
    runScript(
      redis,
      'load-iteration',
      [keys.run, keys.journal, chat, chatViewKey(chat), keys.steers],
      [0, field, note === '' ? '' : JSON.stringify(note), attemptsKept, '', journalField.reply(1)],
    );
  const lockKey = jobLockKey(space, keys.shard, jobId);
  const park = async (token: string, at: string, wakeAt: number, execution: AttemptStart | '' = '') =>
    runScript(
      redis,
      'mark-parked',
      [lockKey, keys.journal],
      [
        token,
        journalField.parked(jobId),
        String(wakeAt),
        field,
        at,
        new Date(wakeAt).toISOString(),
        execution === '' ? '' : JSON.stringify(execution),
        attemptsKept,
      ],
    );
  const record = async () => {
    const text = await redis.hget(keys.journal, field);
    return text ? attemptsEntrySchema.parse(JSON.parse(text)) : undefined;
  };
  return { keys, lockKey, load, park, record };
}

const at = (second: number) => new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString();
const note = (worker: string, second: number, attempt: number, started: number): AttemptStart => ({
  worker,
  at: at(second),
  attempt,
  started,
});

describe('attempt notes', () => {
  it('judge each execution against the one before: first, takeover, retry, wake', async () => {
    const step = place();
    await redis.hset(step.keys.run, 'record', '{}', 'rev', '1');
    await step.load(note('w-a', 1, 1, 1));
    // The same attempt number again, and no park between: the worker before died.
    await step.load(note('w-b', 2, 1, 2));
    // BullMQ's attempt number went up: the execution before failed.
    await step.load(note('w-b', 3, 2, 3));
    await redis.set(step.lockKey, 'token-b', 'PX', 10_000);
    expect(await step.park('token-b', at(4), Date.parse(at(60)))).toEqual(['OK']);
    await step.load(note('w-c', 5, 2, 4));
    const record = await step.record();
    expect(record?.count).toBe(4);
    expect(record?.attempts).toEqual([
      { ...note('w-a', 1, 1, 1), cause: 'first' },
      { ...note('w-b', 2, 1, 2), cause: 'takeover' },
      { ...note('w-b', 3, 2, 3), cause: 'retry', parked_at: at(4), wake_at: at(60) },
      { ...note('w-c', 5, 2, 4), cause: 'wake' },
    ]);
  });

  it('note an execution once, and one that parks before any script noted it (a call waiting for approval)', async () => {
    const step = place();
    await redis.hset(step.keys.run, 'record', '{}', 'rev', '1');
    await redis.set(step.lockKey, 'token-a', 'PX', 10_000);
    expect(await step.park('token-a', at(2), Date.parse(at(90)), note('w-a', 1, 1, 1))).toEqual(['OK']);
    await step.load(note('w-b', 5, 1, 2));
    // The same execution (its `started`) again: nothing new.
    await step.load(note('w-b', 6, 1, 2));
    const record = await step.record();
    expect(record?.count).toBe(2);
    expect(record?.attempts).toEqual([
      { ...note('w-a', 1, 1, 1), cause: 'first', parked_at: at(2), wake_at: at(90) },
      { ...note('w-b', 5, 1, 2), cause: 'wake' },
    ]);
  });

  it('keep the latest executions only, and count them all', async () => {
    const step = place();
    await redis.hset(step.keys.run, 'record', '{}', 'rev', '1');
    for (let execution = 1; execution <= attemptsKept + 5; execution += 1)
      await step.load(note('w', execution, 1, execution));
    const record = await step.record();
    expect(record?.count).toBe(attemptsKept + 5);
    expect(record?.attempts).toHaveLength(attemptsKept);
    expect(record?.attempts[0]?.started).toBe(6);
    expect(record?.attempts.every((attempt) => attempt.cause === 'takeover')).toBe(true);
  });

  it('write nothing for a run that does not exist (a deleted run leaves no journal behind)', async () => {
    const step = place();
    await step.load(note('w-a', 1, 1, 1));
    expect(await redis.exists(step.keys.journal)).toBe(0);
  });

  it('a park by a worker that lost the lock marks nothing', async () => {
    const step = place();
    await redis.hset(step.keys.run, 'record', '{}', 'rev', '1');
    await step.load(note('w-a', 1, 1, 1));
    await redis.set(step.lockKey, 'token-new', 'PX', 10_000);
    expect(await step.park('token-old', at(2), Date.parse(at(30)))).toEqual(['LOCK_LOST']);
    expect((await step.record())?.attempts[0]?.parked_at).toBeUndefined();
  });
});
