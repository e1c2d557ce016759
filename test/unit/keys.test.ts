import { QueueKeys } from 'bullmq';
import { describe, expect, it } from 'vitest';
import {
  chatKey,
  jobLockKey,
  type KeySpace,
  keyPattern,
  mainChatId,
  runKeys,
  sessionKeys,
  shardOf,
  shardPrefix,
  stepQueueName,
} from '../../src/redis/keys.js';
import { newRunId, newSessionId, sessionIdOfRun, stepJobId } from '../../src/workflows/ids.js';

/** The part of a key Redis Cluster hashes: between the first "{" and the next "}". */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}

const space: KeySpace = { prefix: 'ratchet-test', shards: 16 };

describe('shardOf', () => {
  it('is stable: FNV-1a of the session id modulo the shard count', () => {
    // Computed once with an independent FNV-1a: changing these moves every existing session.
    expect(shardOf({ prefix: 'x', shards: 16 }, 'ses_0123456789abcdef')).toBe(11);
    expect(shardOf({ prefix: 'x', shards: 1024 }, 'ses_0123456789abcdef')).toBe(187);
    expect(shardOf({ prefix: 'x', shards: 16 }, 'ses_zzzzzzzzzzzzzzzz')).toBe(7);
    expect(shardOf({ prefix: 'x', shards: 1024 }, 'ses_zzzzzzzzzzzzzzzz')).toBe(903);
  });

  it('does not depend on the prefix', () => {
    expect(shardOf({ prefix: 'a', shards: 16 }, 'ses_0123456789abcdef')).toBe(
      shardOf({ prefix: 'b', shards: 16 }, 'ses_0123456789abcdef'),
    );
  });

  it('is within range and spreads sessions over the shards', () => {
    for (const shards of [1, 3, 16]) {
      const seen = new Set<number>();
      for (let index = 0; index < 400; index += 1) {
        const shard = shardOf({ prefix: 'x', shards }, newSessionId());
        expect(Number.isInteger(shard)).toBe(true);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
        seen.add(shard);
      }
      expect(seen.size).toBe(shards);
    }
  });
});

describe('key names', () => {
  it('every key of a session and its runs shares the shard hash tag with the BullMQ queue and job locks', () => {
    for (let index = 0; index < 30; index += 1) {
      const sessionId = newSessionId();
      const runId = newRunId(sessionId);
      const shard = shardOf(space, sessionId);
      const prefix = shardPrefix(space, shard);
      expect(hashTag(prefix)).toBe(String(shard));

      const session = sessionKeys(space, sessionId);
      const run = runKeys(space, sessionId, runId);
      expect(session.shard).toBe(shard);
      expect(run.shard).toBe(shard);
      const keys = [
        session.session,
        session.events,
        run.session,
        run.events,
        run.run,
        run.journal,
        chatKey(space, sessionId, mainChatId),
        chatKey(space, sessionId, 'child-chat'),
        jobLockKey(space, shard, stepJobId.iteration(runId, 1)),
        new QueueKeys(prefix).toKey(stepQueueName, 'wait'),
      ];
      for (const key of keys) {
        expect(key.startsWith(`${space.prefix}:`)).toBe(true);
        expect(hashTag(key)).toBe(String(shard));
      }
    }
  });

  it('a run is found from its id alone: the session it carries gives the same keys', () => {
    const sessionId = newSessionId();
    const runId = newRunId(sessionId);
    const fromRunId = sessionIdOfRun(runId);
    expect(fromRunId).toBe(sessionId);
    expect(runKeys(space, fromRunId ?? '', runId)).toEqual(runKeys(space, sessionId, runId));
  });

  it('jobLockKey is the key BullMQ locks a job of the step queue with', () => {
    const prefix = shardPrefix(space, 5);
    const jobId = stepJobId.tool(newRunId(newSessionId()), 2, 0);
    expect(jobLockKey(space, 5, jobId)).toBe(`${new QueueKeys(prefix).toKey(stepQueueName, jobId)}:lock`);
  });

  it('keys of different sessions, runs and chats differ', () => {
    const first = newSessionId();
    const second = newSessionId();
    const run = newRunId(first);
    const keys = [
      sessionKeys(space, first).session,
      sessionKeys(space, first).events,
      sessionKeys(space, second).session,
      runKeys(space, first, run).run,
      runKeys(space, first, run).journal,
      runKeys(space, first, newRunId(first)).run,
      chatKey(space, first, mainChatId),
      chatKey(space, first, 'other'),
      chatKey(space, second, mainChatId),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(chatKey(space, first, 'other')).toMatch(/:chat:other$/);
  });

  it('keyPattern matches every key of the space and nothing of another prefix', () => {
    const pattern = keyPattern(space);
    expect(pattern).toBe('ratchet-test:*');
    const sessionId = newSessionId();
    expect(sessionKeys(space, sessionId).session.startsWith(pattern.slice(0, -1))).toBe(true);
    expect(
      sessionKeys({ prefix: 'ratchet-test2', shards: 16 }, sessionId).session.startsWith(
        pattern.slice(0, -1),
      ),
    ).toBe(false);
  });
});
