import { randomBytes } from 'node:crypto';
import type { Telemetry } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodeChatEntry } from '../../src/chat/index.js';
import { buildEvent } from '../../src/events/event.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import {
  chatKey,
  jobLockKey,
  type KeySpace,
  retentionKeys,
  runKeys,
  sessionKeys,
  stepQueueKeys,
} from '../../src/redis/keys.js';
import { commitStep, commitToolOutcome, encodeEvent, loadRun } from '../../src/redis/run-store.js';
import { defineScripts, runScript } from '../../src/redis/scripts.js';
import { StepQueues } from '../../src/redis/step-queues.js';
import { messageAddedEvent, toolResultMessage } from '../../src/workflows/core/run-commits.js';
import { planRunCreation } from '../../src/workflows/core/run-creation.js';
import { newRunId, newSessionId, stepJobId } from '../../src/workflows/ids.js';
import type { RunRecord } from '../../src/workflows/run-record.js';
import type { NextStep } from '../../src/workflows/steps/runner/step-action.js';
import { deleteKeys } from '../helpers/harness.js';

let redis: Redis;
const space: KeySpace = { prefix: `t-lua-${randomBytes(4).toString('hex')}`, shards: 4 };

beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'lua-test' });
  defineScripts(redis);
});
afterAll(async () => {
  await deleteKeys(redis, space.prefix);
  await closeRedis(redis);
});

/** A session with one created run, through the create-run script. */
async function createRun(sessionId = newSessionId(), options: { newSession?: boolean } = {}) {
  const runId = newRunId(sessionId);
  const keys = runKeys(space, sessionId, runId);
  const chat = chatKey(space, sessionId, 'main');
  const chatLength = await redis.llen(chat);
  const plan = planRunCreation({
    sessionId,
    runId,
    agent: 'agent',
    chatId: 'main',
    parts: [{ type: 'text', text: 'hi' }],
    newSession: options.newSession === false ? undefined : { metadata: {} },
    chatLength,
    now: new Date().toISOString(),
  });
  const reply = await runScript(
    redis,
    'create-run',
    [
      keys.session,
      chat,
      keys.events,
      keys.run,
      keys.runs,
      keys.run,
      keys.run,
      retentionKeys(space, keys.shard).sessions,
      keys.runIndex,
      keys.run,
      keys.queued,
    ],
    [
      'create',
      plan.sessionRecord ? JSON.stringify(plan.sessionRecord) : '',
      runId,
      JSON.stringify(plan.record),
      chatLength,
      1000,
      '',
      0,
      '',
      plan.messages.length,
      ...plan.messages.map(encodeChatEntry),
      ...plan.events.map(encodeEvent),
    ],
  );
  return { sessionId, runId, keys, chat, plan, reply };
}

function commitPlan(record: RunRecord | undefined, finished = false) {
  const event = buildEvent(
    'run_started',
    { id: 'x', agent: 'agent' },
    { input: 'e' },
    new Date().toISOString(),
  );
  return { journal: { v: 1 as const, at: 'now' }, record, messages: [], events: [event], finished };
}

describe('create-run', () => {
  it('creates the run, its input and its events, and makes it the active run', async () => {
    const { reply, keys, chat, runId } = await createRun();
    expect(reply[0]).toBe('OK');
    expect(reply).toHaveLength(4);
    expect(await redis.llen(chat)).toBe(1);
    expect(await redis.xlen(keys.events)).toBe(3);
    expect(await redis.hget(keys.session, 'active_run')).toBe(runId);
    expect(await redis.smembers(keys.runs)).toEqual([runId]);
    expect((await loadRun(redis, keys, runId))?.rev).toBe(1);
  });

  it('refuses a second active run, an unknown session and a stale chat length', async () => {
    const first = await createRun();
    const busy = await createRun(first.sessionId, { newSession: false });
    expect(busy.reply).toEqual(['SESSION_BUSY', first.runId]);
    const unknown = await createRun(newSessionId(), { newSession: false });
    expect(unknown.reply).toEqual(['NO_SESSION']);
    await redis.hdel(first.keys.session, 'active_run');
    await redis.rpush(first.chat, 'concurrent append');
    const sessionId = first.sessionId;
    const runId = newRunId(sessionId);
    const stale = await runScript(
      redis,
      'create-run',
      [
        first.keys.session,
        first.chat,
        first.keys.events,
        runKeys(space, sessionId, runId).run,
        first.keys.runs,
        runKeys(space, sessionId, runId).run,
        runKeys(space, sessionId, runId).run,
        retentionKeys(space, first.keys.shard).sessions,
        first.keys.runIndex,
        runKeys(space, sessionId, runId).run,
        first.keys.queued,
      ],
      ['create', '', runId, '{}', 1, 1000, '', 0, '', 0],
    );
    expect(stale).toEqual(['CONFLICT', 'chat']);
  });
});

describe('commit-step', () => {
  async function setup() {
    const created = await createRun();
    const lockKey = jobLockKey(space, sessionKeys(space, created.sessionId).shard, 'job-1');
    await redis.set(lockKey, 'token-a', 'PX', 10_000);
    const stored = await loadRun(redis, created.keys, created.runId);
    if (!stored) throw new Error('no run');
    const base = {
      keys: created.keys,
      chatKey: created.chat,
      lockKey,
      eventsMaxLength: 1000,
      retention: retentionKeys(space, created.keys.shard),
      queue: stepQueueKeys(space, created.keys.shard),
    };
    return { ...created, stored, base, lockKey };
  }

  it('writes once: a second commit of the same journal field finds it done', async () => {
    const { base, stored, keys } = await setup();
    const plan = commitPlan({ ...stored.record, status: 'running' });
    const first = await commitStep(redis, {
      ...base,
      token: 'token-a',
      journalField: 'step:1',
      plan,
      expectedRev: stored.rev,
    });
    expect(first.status).toBe('ok');
    const second = await commitStep(redis, {
      ...base,
      token: 'token-a',
      journalField: 'step:1',
      plan,
      expectedRev: stored.rev,
    });
    expect(second).toEqual({ status: 'done', value: JSON.stringify(plan.journal) });
    expect(await redis.xlen(keys.events)).toBe(4);
    expect(await redis.hget(keys.run, 'rev')).toBe('2');
  });

  it('refuses a worker that no longer holds the job lock (fencing)', async () => {
    const { base, stored, keys, lockKey } = await setup();
    const plan = commitPlan({ ...stored.record, status: 'running' });
    expect(await commitStep(redis, { ...base, token: 'token-b', journalField: 'step:1', plan })).toEqual({
      status: 'lock_lost',
    });
    await redis.del(lockKey);
    expect(await commitStep(redis, { ...base, token: 'token-a', journalField: 'step:1', plan })).toEqual({
      status: 'lock_lost',
    });
    expect(await redis.xlen(keys.events)).toBe(3);
    expect(await redis.hexists(keys.journal, 'step:1')).toBe(0);
  });

  it('refuses changes to a stale run revision or chat length', async () => {
    const { base, stored } = await setup();
    const plan = commitPlan({ ...stored.record, status: 'running' });
    const staleRev = await commitStep(redis, {
      ...base,
      token: 'token-a',
      journalField: 'a',
      plan,
      expectedRev: stored.rev + 1,
    });
    expect(staleRev).toEqual({ status: 'conflict', what: 'run' });
    const staleChat = await commitStep(redis, {
      ...base,
      token: 'token-a',
      journalField: 'b',
      plan,
      expectedChatLength: 5,
    });
    expect(staleChat).toEqual({ status: 'conflict', what: 'chat' });
  });

  it('refuses any change to a finished run and releases the session when a run finishes', async () => {
    const { base, stored, keys } = await setup();
    const finish = commitPlan({ ...stored.record, status: 'failed' }, true);
    expect(
      (await commitStep(redis, { ...base, token: 'token-a', journalField: 'end', plan: finish })).status,
    ).toBe('ok');
    expect(await redis.hget(keys.session, 'active_run')).toBeNull();
    const later = await commitStep(redis, {
      ...base,
      token: 'token-a',
      journalField: 'later',
      plan: commitPlan(undefined),
    });
    expect(later).toEqual({ status: 'run_finished', runStatus: 'failed' });
  });

  it('says when the run does not exist', async () => {
    const { base } = await setup();
    const missing = runKeys(space, newSessionId(), 'nope');
    const result = await commitStep(redis, {
      ...base,
      keys: missing,
      token: 'token-a',
      journalField: 'x',
      plan: commitPlan(undefined),
    });
    expect(result).toEqual({ status: 'no_run' });
  });
});

describe('commit-step adding the next step jobs (decision 0051)', () => {
  const settings = { attempts: 8, keepCompletedSeconds: 3600 };

  it('adds them as BullMQ adds a job, once, only with a commit that writes', async () => {
    const { sessionId, runId, keys, chat } = await createRun();
    const { shard } = keys;
    const lockKey = jobLockKey(space, shard, 'job-next');
    await redis.set(lockKey, 'token-a', 'PX', 10_000);
    const queues = new StepQueues(redis, space, settings, silentLogger());
    const queue = queues.queue(shard);
    const data = {
      v: 1,
      session_id: sessionId,
      run_id: runId,
      agent: 'agent',
      chat_id: 'main',
      iteration: 2,
    };
    const next = [{ kind: 'iteration', data } as unknown as NextStep];
    const jobs = queues.jobsInCommit(next);
    const base = {
      keys,
      chatKey: chat,
      lockKey,
      eventsMaxLength: 1000,
      retention: retentionKeys(space, shard),
      queue: stepQueueKeys(space, shard),
      token: 'token-a',
      plan: commitPlan(undefined),
      jobs,
    };
    // Refused (another worker's lock): nothing is added.
    expect(await commitStep(redis, { ...base, token: 'token-b', journalField: 'next:1' })).toEqual({
      status: 'lock_lost',
    });
    const jobId = stepJobId.iteration(runId, 2);
    expect(await redis.exists(`${base.queue.jobPrefix}${jobId}`)).toBe(0);

    const first = await commitStep(redis, { ...base, journalField: 'next:1' });
    expect(first).toMatchObject({ status: 'ok', enqueued: true });
    // The same job Queue.add makes of the same step (the reference under another id).
    const reference = await queue.add('iteration', data, queues.jobOptions('reference-job'));
    const added = await redis.hgetall(`${base.queue.jobPrefix}${jobId}`);
    const made = await redis.hgetall(`${base.queue.jobPrefix}reference-job`);
    expect(Object.keys(added).sort()).toEqual(Object.keys(made).sort());
    const { timestamp: _t1, opts: addedOpts, ...addedFields } = added;
    const { timestamp: _t2, opts: madeOpts, ...madeFields } = made;
    expect(addedFields).toEqual(madeFields);
    expect({ ...JSON.parse(addedOpts ?? '{}'), jobId: 'x' }).toEqual({
      ...JSON.parse(madeOpts ?? '{}'),
      jobId: 'x',
    });
    // BullMQ sees it waiting, with its data and options; the queue's marker wakes a blocked worker.
    const job = await queue.getJob(jobId);
    expect(job?.name).toBe('iteration');
    expect(job?.data).toEqual(data);
    expect(job?.opts).toMatchObject({ jobId, attempts: 8, backoff: { type: 'ratchet' } });
    expect(await job?.getState()).toBe('waiting');
    expect(await redis.zcard(`${base.queue.jobPrefix}marker`)).toBe(1);
    const events = (await redis.xrange(`${base.queue.jobPrefix}events`, '-', '+')).map(
      ([, fields]) => fields,
    );
    expect(events).toContainEqual(['event', 'added', 'jobId', jobId, 'name', 'iteration']);
    expect(events).toContainEqual(['event', 'waiting', 'jobId', jobId]);

    // The commit again (a retried step): DONE, nothing added. Another commit naming the job: left as it is.
    expect((await commitStep(redis, { ...base, journalField: 'next:1' })).status).toBe('done');
    await redis.hset(`${base.queue.jobPrefix}${jobId}`, 'data', '{"kept":true}');
    expect(await commitStep(redis, { ...base, journalField: 'next:2' })).toMatchObject({ status: 'ok' });
    expect(await redis.hget(`${base.queue.jobPrefix}${jobId}`, 'data')).toBe('{"kept":true}');
    expect(await queue.getWaitingCount()).toBe(2);
    await reference.remove();
    await queues.close();
  });

  it('commit-tool-outcome adds the next iteration only with the outcome that completes the batch', async () => {
    const { sessionId, runId, keys, chat } = await createRun();
    const { shard } = keys;
    const queues = new StepQueues(redis, space, settings, silentLogger());
    const data = {
      v: 1,
      session_id: sessionId,
      run_id: runId,
      agent: 'agent',
      chat_id: 'main',
      iteration: 2,
    };
    const jobs = queues.jobsInCommit([{ kind: 'iteration', data } as unknown as NextStep]);
    const jobKey = `${stepQueueKeys(space, shard).jobPrefix}${stepJobId.iteration(runId, 2)}`;
    const now = new Date().toISOString();
    const run = { id: runId, agent: 'agent', chat_id: 'main' };
    // Two calls of iteration 1, answering the reply at chat position 0 (the chat holds one entry).
    const outcome = async (index: number) => {
      const lockKey = jobLockKey(space, shard, `tool-${index}`);
      await redis.set(lockKey, 'token-a', 'PX', 10_000);
      const message = toolResultMessage({
        runId,
        iteration: 1,
        index,
        call: { id: `call_${index}`, name: 'noop' },
        content: 'done',
        isError: false,
        now,
      });
      return commitToolOutcome(redis, {
        keys,
        chatKey: chat,
        lockKey,
        token: 'token-a',
        eventsMaxLength: 1000,
        retention: retentionKeys(space, shard),
        queue: stepQueueKeys(space, shard),
        iteration: 1,
        index,
        calls: 2,
        replyIndex: 0,
        outcome: { v: 1, is_error: false, at: now },
        message,
        messageAdded: messageAddedEvent(run, message, 1 + index, now),
        events: [],
        jobs,
      });
    };
    expect(await outcome(1)).toMatchObject({ status: 'ok', completedBatch: false });
    expect(await redis.exists(jobKey)).toBe(0);
    const completing = await outcome(0);
    expect(completing).toMatchObject({ status: 'ok', completedBatch: true, enqueued: true });
    expect(await redis.llen(chat)).toBe(3);
    const job = await queues.queue(shard).getJob(stepJobId.iteration(runId, 2));
    expect(job?.data).toEqual(data);
    expect(await job?.getState()).toBe('waiting');
    await job?.remove();
    await queues.close();
  });

  it('leaves traced jobs and steps of other kinds to Queue.add', () => {
    const traced = new StepQueues(redis, space, settings, silentLogger(), {} as Telemetry);
    const queues = new StepQueues(redis, space, settings, silentLogger());
    const iteration = { kind: 'iteration', data: { run_id: 'r', iteration: 1 } } as unknown as NextStep;
    expect(traced.jobsInCommit([iteration])).toBe('');
    expect(queues.jobsInCommit([])).toBe('');
    expect(
      queues.jobsInCommit([iteration, { kind: 'wake_parent', run: { session_id: 's', parent: null } }]),
    ).toBe('');
    expect(JSON.parse(queues.jobsInCommit([iteration]))).toHaveLength(1);
  });
});

describe('mark-parked', () => {
  it('marks a parked step only for the worker holding its lock', async () => {
    const { sessionId, keys } = await createRun();
    const lockKey = jobLockKey(space, sessionKeys(space, sessionId).shard, 'job-parked');
    await redis.set(lockKey, 'token-a', 'PX', 10_000);
    const mark = (token: string) =>
      runScript(redis, 'mark-parked', [lockKey, keys.journal], [token, 'parked:job-parked', '123']);
    expect(await mark('token-b')).toEqual(['LOCK_LOST']);
    expect(await redis.hexists(keys.journal, 'parked:job-parked')).toBe(0);
    expect(await mark('token-a')).toEqual(['OK']);
    expect(await redis.hget(keys.journal, 'parked:job-parked')).toBe('123');
  });
});

describe('note-write and state-set (a hash bounded in size)', () => {
  it('refuse a new field once the hash holds the most it may, and always rewrite a field it holds', async () => {
    const notes = `${space.prefix}:{bounded}:notes`;
    expect(await runScript(redis, 'note-write', [notes], ['a', '"1"', 2])).toEqual(['OK']);
    expect(await runScript(redis, 'note-write', [notes], ['b', '"2"', 2])).toEqual(['OK']);
    expect(await runScript(redis, 'note-write', [notes], ['c', '"3"', 2])).toEqual(['FULL', '2']);
    expect(await runScript(redis, 'note-write', [notes], ['a', '"4"', 2])).toEqual(['OK']);
    expect(await redis.hgetall(notes)).toEqual({ a: '"4"', b: '"2"' });

    const state = `${space.prefix}:{bounded}:state`;
    const watchers = `${space.prefix}:{bounded}:watchers`;
    await redis.hset(watchers, 'b', '["job-1"]');
    expect(await runScript(redis, 'state-set', [state, watchers], ['a', '1', 1])).toEqual(['OK', '[]']);
    expect(await runScript(redis, 'state-set', [state, watchers], ['b', '2', 1])).toEqual(['FULL', '1']);
    // A refused set wakes nobody: the watchers of b still wait.
    expect(await redis.hget(watchers, 'b')).toBe('["job-1"]');
    await redis.hset(watchers, 'a', '["job-2"]');
    expect(await runScript(redis, 'state-set', [state, watchers], ['a', '3', 1])).toEqual([
      'OK',
      '["job-2"]',
    ]);
    expect(await redis.hgetall(state)).toEqual({ a: '3' });
    expect(await redis.hgetall(watchers)).toEqual({ b: '["job-1"]' });
  });
});
