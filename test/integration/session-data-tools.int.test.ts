import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RatchetError } from '../../src/errors/index.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { type KeySpace, sessionDataKeys } from '../../src/redis/keys.js';
import { defineScripts } from '../../src/redis/scripts.js';
import { redisSessionData } from '../../src/redis/session-data-store.js';
import { stateToolbox } from '../../src/tools/builtin/session-data/state-toolbox.js';
import { tasksToolbox } from '../../src/tools/builtin/session-data/tasks-toolbox.js';
import type { AnyTool } from '../../src/tools/index.js';
import { deleteKeys } from '../helpers/harness.js';
import { sessionAccess, toolContext } from '../helpers/tool-calls.js';

// The handlers against a real Redis, with contexts as a worker builds them: two runs of one session, retried
// calls (same idempotency key) and parked watches.

let redis: Redis;
let space: KeySpace;
beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'session-data-test' });
  defineScripts(redis);
  space = { prefix: `t-${randomBytes(6).toString('hex')}`, shards: 4 };
});
afterAll(async () => {
  await deleteKeys(redis, space.prefix);
  await closeRedis(redis);
});

const tools = new Map<string, AnyTool>(
  [...stateToolbox().tools, ...tasksToolbox().tools].map((tool) => [tool.name, tool]),
);

function newSession(): string {
  return `ses_${randomBytes(8).toString('hex')}`;
}

interface CallOptions {
  sessionId: string;
  runId?: string;
  agent?: string;
  key?: string;
  now?: () => Date;
  /** Collects the wake-up times of parked calls. */
  parked?: number[];
  /** Collects the jobs a call wakes. */
  woken?: string[];
}

/** Runs a tool's handler as a worker would: the input parsed by its schema, a context for the call. */
async function call(name: string, input: unknown, options: CallOptions): Promise<unknown> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const runId = options.runId ?? 'run_a';
  const key = options.key ?? `${runId}-${name}-${randomBytes(4).toString('hex')}`;
  const context = toolContext({
    idempotencyKey: key,
    sessionId: options.sessionId,
    runId,
    agent: options.agent ?? 'agent',
    session: sessionAccess({
      data: redisSessionData(redis, space, options.sessionId),
      jobId: key,
      now: options.now ?? (() => new Date()),
      recheckMs: 60_000,
      park: async (wakeAt, waitingFor) => {
        options.parked?.push(wakeAt);
        return new RatchetError('suspended', `waiting for ${waitingFor}`, { details: { wake_at: wakeAt } });
      },
      wake: async (jobId) => {
        options.woken?.push(jobId);
      },
    }),
  });
  return tool.handler(context, tool.inputSchema.parse(input));
}

describe('tasks with several claimers', () => {
  it('of twenty runs claiming one task at once, exactly one wins', async () => {
    const sessionId = newSession();
    await call('task_create', { title: 'contended' }, { sessionId });
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_unused, index) =>
        call('task_claim', { id: '1' }, { sessionId, runId: `run_${index}`, agent: `agent_${index}` }),
      ),
    );
    const won = attempts.filter((attempt) => attempt.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const attempt of attempts) {
      if (attempt.status === 'rejected')
        expect(String(attempt.reason)).toMatch(/task 1 is already claimed by agent/);
    }
  });

  it('a claim retried by the same call succeeds again; another call of the run is refused', async () => {
    const sessionId = newSession();
    await call('task_create', { title: 'mine' }, { sessionId });
    const first = await call('task_claim', { id: '1' }, { sessionId, key: 'claim-call' });
    const retried = await call('task_claim', { id: '1' }, { sessionId, key: 'claim-call' });
    expect(retried).toEqual(first);
    await expect(call('task_claim', { id: '1' }, { sessionId, key: 'a-later-call' })).rejects.toThrow(
      'task 1 is already claimed by this run (agent "agent")',
    );
  });

  it('a retried task_create returns the task it created; other calls add their own', async () => {
    const sessionId = newSession();
    const first = await call('task_create', { title: 'once' }, { sessionId, key: 'create-call' });
    const retried = await call('task_create', { title: 'once' }, { sessionId, key: 'create-call' });
    expect(retried).toEqual(first);
    await call('task_create', { title: 'another' }, { sessionId });
    expect(await redis.hlen(sessionDataKeys(space, sessionId).tasks)).toBe(2);
  });

  it('only the claiming run updates a claimed task; "pending" gives it back to the board', async () => {
    const sessionId = newSession();
    await call('task_create', { title: 'shared' }, { sessionId });
    await call('task_claim', { id: '1' }, { sessionId, runId: 'run_owner', agent: 'owner' });
    await expect(
      call(
        'task_update',
        { id: '1', status: 'completed' },
        { sessionId, runId: 'run_other', agent: 'other' },
      ),
    ).rejects.toThrow('task 1 is claimed by agent "owner" (run run_owner): only they may update it');
    const released = await call(
      'task_update',
      { id: '1', status: 'pending', note: 'blocked' },
      { sessionId, runId: 'run_owner', agent: 'owner', key: 'release-call' },
    );
    expect(released).toMatchObject({ task: { status: 'pending', assignee: null, note: 'blocked' } });
    // The release retried after someone else claimed the task: the same call changes nothing.
    await call('task_claim', { id: '1' }, { sessionId, runId: 'run_other', agent: 'other' });
    const retried = await call(
      'task_update',
      { id: '1', status: 'pending', note: 'blocked' },
      { sessionId, runId: 'run_owner', agent: 'owner', key: 'release-call' },
    );
    expect(retried).toMatchObject({ task: { status: 'in_progress', assignee: 'other' } });
    await expect(call('task_claim', { id: '9' }, { sessionId })).rejects.toThrow('no task with id "9"');
  });
});

describe('state_watch', () => {
  it('keeps the deadline of its first execution, parks until then, and then times out', async () => {
    const sessionId = newSession();
    const parked: number[] = [];
    let now = Date.parse('2030-01-01T00:00:00Z');
    const options = { sessionId, key: 'watch-call', parked, now: () => new Date(now) };
    await expect(call('state_watch', { key: 'k', timeout_s: 10 }, options)).rejects.toMatchObject({
      code: 'suspended',
    });
    // Executed again 4 s later (a recheck): still the first deadline.
    now += 4_000;
    await expect(call('state_watch', { key: 'k', timeout_s: 10 }, options)).rejects.toMatchObject({
      code: 'suspended',
    });
    expect(parked).toEqual([Date.parse('2030-01-01T00:00:10Z'), Date.parse('2030-01-01T00:00:10Z')]);
    const watchers = sessionDataKeys(space, sessionId).stateWatchers;
    expect(JSON.parse((await redis.hget(watchers, 'k')) ?? '[]')).toEqual([
      { job: 'watch-call', deadline: Date.parse('2030-01-01T00:00:10Z') },
    ]);
    now += 6_000;
    expect(await call('state_watch', { key: 'k', timeout_s: 10 }, options)).toEqual({
      found: false,
      timed_out: true,
      key: 'k',
    });
    expect(await redis.hexists(watchers, 'k')).toBe(0);
  });

  it('drops a watcher that never looks again (its run was cancelled) once its deadline has passed', async () => {
    const sessionId = newSession();
    let now = Date.parse('2030-01-01T00:00:00Z');
    const clock = () => new Date(now);
    const watchers = sessionDataKeys(space, sessionId).stateWatchers;
    await expect(
      call('state_watch', { key: 'k', timeout_s: 10 }, { sessionId, key: 'cancelled', now: clock }),
    ).rejects.toMatchObject({ code: 'suspended' });
    // A watcher written before deadlines were kept (a bare job id) is still handed back.
    const listed = JSON.parse((await redis.hget(watchers, 'k')) ?? '[]') as unknown[];
    await redis.hset(watchers, 'k', JSON.stringify(['legacy', ...listed]));
    now += 11_000;
    await expect(
      call('state_watch', { key: 'k', timeout_s: 60 }, { sessionId, key: 'later', now: clock }),
    ).rejects.toMatchObject({ code: 'suspended' });
    expect(JSON.parse((await redis.hget(watchers, 'k')) ?? '[]')).toEqual([
      'legacy',
      { job: 'later', deadline: now + 60_000 },
    ]);
    const woken: string[] = [];
    await call('state_set', { key: 'k', value: 1 }, { sessionId, woken });
    expect(woken).toEqual(['legacy', 'later']);
    expect(await redis.hexists(watchers, 'k')).toBe(0);
  });

  it('returns at once when the key is set, and state_set hands back the parked watchers', async () => {
    const sessionId = newSession();
    await expect(call('state_watch', { key: 'k' }, { sessionId, key: 'w1' })).rejects.toMatchObject({
      code: 'suspended',
    });
    const woken: string[] = [];
    await call('state_set', { key: 'k', value: [1, 'two'] }, { sessionId, woken });
    expect(woken).toEqual(['w1']);
    expect(await call('state_watch', { key: 'k' }, { sessionId, key: 'w1' })).toEqual({
      found: true,
      key: 'k',
      value: [1, 'two'],
    });
  });

  it('refuses a value too large to keep, naming the field', async () => {
    await expect(
      call('state_set', { key: 'big', value: 'x'.repeat(70_000) }, { sessionId: newSession() }),
    ).rejects.toThrow(/^value is 70002 characters as JSON; at most 65536 fit/);
  });
});

describe('state_delete', () => {
  it('removes a key, says whether it was set, and a retried call deletes nothing more', async () => {
    const sessionId = newSession();
    await call('state_set', { key: 'draft', value: { text: 'v1' } }, { sessionId });
    expect(await call('state_delete', { key: 'draft' }, { sessionId, key: 'delete-call' })).toEqual({
      ok: true,
      key: 'draft',
      deleted: true,
    });
    expect(await call('state_get', { key: 'draft' }, { sessionId })).toEqual({ found: false, key: 'draft' });
    expect(await call('state_list', {}, { sessionId })).toEqual({ keys: [] });
    // Another agent sets the key again; the first delete, run again after its worker died, leaves it alone
    // and answers as it did the first time.
    await call('state_set', { key: 'draft', value: { text: 'v2' } }, { sessionId });
    expect(await call('state_delete', { key: 'draft' }, { sessionId, key: 'delete-call' })).toEqual({
      ok: true,
      key: 'draft',
      deleted: true,
    });
    expect(await call('state_get', { key: 'draft' }, { sessionId })).toEqual({
      found: true,
      key: 'draft',
      value: { text: 'v2' },
    });
    // A key that is not set: nothing to delete, and not an error.
    expect(await call('state_delete', { key: 'never' }, { sessionId })).toEqual({
      ok: true,
      key: 'never',
      deleted: false,
    });
  });

  it('keeps the answers of the latest 1000 calls only, so calls cannot grow the session without end', async () => {
    const sessionId = newSession();
    const deletes = sessionDataKeys(space, sessionId).stateDeletes;
    await call('state_set', { key: 'k', value: 1 }, { sessionId });
    await call('state_delete', { key: 'k' }, { sessionId, key: 'oldest' });
    for (let index = 0; index < 1_000; index += 1) {
      await call('state_delete', { key: `other-${index}` }, { sessionId, key: `call-${index}` });
    }
    expect(await redis.zcard(deletes)).toBe(1_000);
    expect(await redis.zscore(deletes, 'oldest')).toBeNull();
    // The latest answers are kept: a retried call still gets its own.
    expect(await call('state_delete', { key: 'other-999' }, { sessionId, key: 'call-999' })).toEqual({
      ok: true,
      key: 'other-999',
      deleted: false,
    });
  });

  it('wakes no watcher: a watch waits on until the key is set', async () => {
    const sessionId = newSession();
    await expect(call('state_watch', { key: 'k' }, { sessionId, key: 'w1' })).rejects.toMatchObject({
      code: 'suspended',
    });
    const woken: string[] = [];
    await call('state_delete', { key: 'k' }, { sessionId, woken });
    expect(woken).toEqual([]);
    const watchers = sessionDataKeys(space, sessionId).stateWatchers;
    expect(JSON.parse((await redis.hget(watchers, 'k')) ?? '[]')).toMatchObject([{ job: 'w1' }]);
    await call('state_set', { key: 'k', value: 'now' }, { sessionId, woken });
    expect(woken).toEqual(['w1']);
  });

  it('refuses keys a model could abuse, naming the bound', async () => {
    const sessionId = newSession();
    await expect(call('state_delete', { key: 'x'.repeat(201) }, { sessionId })).rejects.toThrow(/200/);
    await expect(call('state_delete', { key: 'a\u0000b' }, { sessionId })).rejects.toThrow(
      /a state key may not contain control characters/,
    );
    await expect(call('state_delete', { key: '' }, { sessionId })).rejects.toThrow(/>=1 characters/);
    await expect(call('state_delete', { key: 'k', all: true }, { sessionId })).rejects.toThrow(/all/);
  });
});
