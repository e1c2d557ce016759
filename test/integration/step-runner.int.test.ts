import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { jobLockKey, type KeySpace, runKeys } from '../../src/redis/keys.js';
import { redisStepStores } from '../../src/redis/step-store.js';
import { journalField, runStep, type StepContext } from '../../src/workflows/index.js';
import { iterationAfterTools } from '../../src/workflows/job-data.js';
import {
  commit,
  done,
  enqueue,
  park,
  type StepAction,
} from '../../src/workflows/steps/runner/step-action.js';
import { deleteKeys } from '../helpers/harness.js';

// The one runner, on real Redis and BullMQ: what it does with each decision a step returns.
let redis: Redis;
let engine: Engine;
const space: KeySpace = { prefix: `t-runner-${randomBytes(4).toString('hex')}`, shards: 2 };

beforeAll(() => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'runner-test' });
  engine = new Engine({
    redis,
    space,
    jobs: { attempts: 3, keepCompletedSeconds: 60 },
    eventsMaxLength: 1000,
    agents: ['agent'],
    defaultAgent: 'agent',
    logger: silentLogger(),
  });
});
afterAll(async () => {
  await engine.close();
  await deleteKeys(redis, space.prefix);
  await closeRedis(redis);
});

/** A started run and the context of one execution of a step job of it, holding the job's lock. */
async function stepOfNewRun(jobId: string, heldBy = 'token-a') {
  const { runId, sessionId } = await engine.startRun({ input: 'hi' });
  const job = { session_id: sessionId, run_id: runId, chat_id: 'main' };
  const store = redisStepStores(redis, space, 1000).open(job, jobId, 'token-a');
  await redis.set(jobLockKey(space, store.write.keys.shard, jobId), heldBy, 'PX', 30_000);
  const context = {
    services: { scheduler: engine.scheduler(), now: () => new Date() },
    jobId,
    sessionId,
    lockToken: 'token-a',
    write: store.write,
    store,
    attempt: 1,
    started: 1,
    signal: new AbortController().signal,
    logger: silentLogger(),
  } as unknown as StepContext & { write: typeof store.write };
  return { context, job, runId, sessionId };
}

function eventCommit(context: StepContext, field: string) {
  return {
    op: 'run' as const,
    request: {
      journalField: field,
      plan: {
        journal: { v: 1, at: context.services.now().toISOString() },
        record: undefined,
        messages: [],
        events: [],
        finished: false,
      },
    },
  };
}

const noPark = async () => {
  throw new Error('the step was not to park');
};

describe('runStep', () => {
  it('hands the result of a commit to the step, and adds the steps it asks for', async () => {
    const { context, job, runId } = await stepOfNewRun('job-ok');
    const seen: string[] = [];
    const next = iterationAfterTools({
      ...job,
      v: 2,
      agent: 'agent',
      iteration: 1,
      index: 0,
      calls: 1,
      reply_index: 1,
      tool_name: 'echo',
      lineage: [],
    });
    const action = commit(eventCommit(context, 'test:1'), {
      what: 'a test commit',
      andThen: (result) => {
        seen.push(result.status);
        return enqueue([{ kind: 'iteration', data: next }], { andThen: () => done });
      },
    });
    expect(await runStep(context, Promise.resolve(action), noPark)).toBe('done');
    expect(seen).toEqual(['ok']);
    const queue = engine.queues.queue(context.write.keys.shard);
    const added = await queue.getJob(`${runId}-i2`);
    expect(added?.data).toMatchObject({ run_id: runId, iteration: 2, previous_calls: 1 });

    // The same commit again (a retried step) is found done, and the step is told so.
    await runStep(
      context,
      Promise.resolve(
        commit(eventCommit(context, 'test:1'), {
          what: 'a test commit',
          andThen: (result) => {
            seen.push(result.status);
            return done;
          },
        }),
      ),
      noPark,
    );
    expect(seen).toEqual(['ok', 'done']);
  });

  it('refuses to go on when another worker holds the job: lock_lost, and the step never sees the result', async () => {
    const { context } = await stepOfNewRun('job-lost', 'token-of-another-worker');
    let continued = false;
    const action = commit(eventCommit(context, 'test:lost'), {
      what: 'a fenced commit',
      andThen: () => {
        continued = true;
        return done;
      },
    });
    await expect(runStep(context, Promise.resolve(action), noPark)).rejects.toMatchObject({
      code: 'lock_lost',
    });
    expect(continued).toBe(false);
    expect(await redis.hget(context.write.keys.journal, 'test:lost')).toBeNull();
  });

  it('parks a step: marks it in the journal (fenced), moves the job, then rechecks', async () => {
    const { context, runId, sessionId } = await stepOfNewRun('job-park');
    const wakeAt = Date.now() + 60_000;
    const moved: number[] = [];
    let rechecked = 0;
    const action: StepAction = park(wakeAt, async () => {
      rechecked += 1;
      return false;
    });
    const end = await runStep(context, Promise.resolve(action), async (at) => {
      moved.push(at);
    });
    expect(end).toBe('parked');
    expect(moved).toEqual([wakeAt]);
    expect(rechecked).toBe(1);
    const journal = runKeys(space, sessionId, runId).journal;
    expect(await redis.hget(journal, journalField.parked('job-park'))).toBe(String(wakeAt));
  });

  it('does not park a step whose lock is gone', async () => {
    const { context } = await stepOfNewRun('job-park-lost', 'token-of-another-worker');
    const moved: number[] = [];
    await expect(
      runStep(context, Promise.resolve(park(Date.now() + 1000)), async (at) => {
        moved.push(at);
      }),
    ).rejects.toMatchObject({ code: 'lock_lost' });
    expect(moved).toEqual([]);
  });
});
