import { type Job, Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, redisTargetOf } from '../../src/redis/connection.js';
import { runKeys, shardOf, shardPrefix, stepQueueName } from '../../src/redis/keys.js';
import { forgetWaitingStep, noteWaitingStep } from '../../src/redis/waiting-for-worker.js';
import { WorkerRegistry } from '../../src/redis/worker-registry.js';
import { CapabilityGate, type StepPlace } from '../../src/worker/capability-gate.js';
import { type Capabilities, capabilityKinds } from '../../src/workflows/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { count, eventKinds, generationsHarness, spaceOf, statusOf } from '../helpers/generations.js';
import type { Harness } from '../helpers/harness.js';

// Decision 0031's race, replayed step by step in one process on real Redis and real BullMQ jobs: worker B
// (which serves the agent `clerk`) ends a run's wait for a worker and wakes its step; before B removes the
// step's entry from the waiting steps, worker A (which lacks `clerk`, and whose view of the live workers is
// older than B) takes the woken step and hands it back again. Before the fix, A marked the run waiting a
// second time and B then removed the entry that A's mark relied on: no worker ever ended that wait, and the
// run kept an unmatched waiting_for_worker event.

let harness: Harness | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await harness?.close();
  harness = undefined;
});

function capabilitiesWith(agents: string[]): Capabilities {
  const none = Object.fromEntries(capabilityKinds.map((kind) => [kind, [] as string[]]));
  return { ...none, agents } as unknown as Capabilities;
}

async function setUp(options: { bRegistered: boolean; agent?: string }) {
  const h = generationsHarness();
  harness = h;
  const space = spaceOf(h);
  const agent = options.agent ?? 'clerk';
  const { runId, sessionId } = await h.engine.startRun({ input: 'add 2 and 3', agent });
  const shard = shardOf(space, sessionId);
  const connection = createRedis({
    ...redisTargetOf(h.loaded.config.redis),
    logger: silentLogger(),
    name: 'test-race',
  });
  const prefix = shardPrefix(space, shard);
  // No processor: this test takes step jobs itself, with tokens of its choosing, as a worker's loop would.
  const taker = new Worker(stepQueueName, null, { connection, prefix, autorun: false });
  const queue = new Queue(stepQueueName, { connection, prefix });
  closers.push(async () => {
    await taker.close();
    await queue.close();
    await closeRedis(connection);
  });
  let tokens = 0;
  const take = async (): Promise<{ job: Job; token: string }> => {
    const token = `test-token-${++tokens}`;
    const job = (await taker.getNextJob(token, { block: false })) as Job | undefined;
    if (!job) throw new Error('no step job to take');
    return { job, token };
  };
  const promote = async (jobId: string) => {
    const job = await queue.getJob(jobId);
    if (job && (await job.isDelayed())) await job.promote();
  };
  const missing = [`agent:${agent}`];
  let onWake: (jobId: string) => Promise<void> = async () => {};
  const gate = (workerId: string, capabilities: Capabilities) =>
    new CapabilityGate({
      redis: h.redis,
      space,
      workerId,
      shards: [shard],
      capabilities,
      definitionOf: () => undefined,
      recordedNeeds: async () => undefined,
      waitMs: 1_000,
      // Far off: nothing but a look wakes a parked step here.
      recheckMs: 600_000,
      eventsMaxLength: 1_000,
      wake: async (_sessionId, jobId) => {
        await promote(jobId);
        await onWake(jobId);
      },
      logger: silentLogger(),
    });
  const a = gate('worker-a', capabilitiesWith([]));
  const b = gate('worker-b', capabilitiesWith(['clerk']));
  // B appears (its registry entry, as its start writes it) once A has marked the run.
  const bAppears = async () => {
    if (!options.bRegistered) return;
    const registry = new WorkerRegistry(h.redis, space, 'worker-b', 600_000);
    await registry.register(['bullmq-b'], {
      host: 'test',
      concurrency: 1,
      shards: [shard],
      capabilities: capabilitiesWith(['clerk']),
    });
  };
  return {
    bAppears,
    h,
    runId,
    sessionId,
    missing,
    a,
    b,
    take,
    promote,
    forget: (jobId: string) => forgetWaitingStep(h.redis, space, jobId),
    setOnWake: (hook: typeof onWake) => {
      onWake = hook;
    },
    marker: () => h.redis.hexists(runKeys(space, sessionId, runId).run, 'waiting_for_worker'),
    place: (job: Job): StepPlace => ({
      session_id: job.data.session_id,
      run_id: job.data.run_id,
      agent: job.data.agent,
    }),
    // A's first hand-back was capability_wait_s ago: the wait has run out when A hands the step back.
    noteOldWait: (jobId: string) =>
      noteWaitingStep(h.redis, space, {
        job_id: jobId,
        session_id: sessionId,
        run_id: runId,
        shard,
        missing,
        since: Date.now() - 5_000,
      }),
  };
}

/** A marks the run waiting; B ends the wait, and while B wakes the step, A takes it and hands it back. */
async function replayRace(race: Awaited<ReturnType<typeof setUp>>) {
  const { a, b, take, place, missing, h, runId } = race;
  const first = await take();
  expect(first.job.data.run_id).toBe(runId);
  await race.noteOldWait(first.job.id as string);
  expect(await a.missingFor(place(first.job))).toEqual(missing);
  await a.handBack(first.job, first.token, place(first.job), missing, undefined);
  expect((await h.engine.getRun(runId))?.status).toBe('waiting_for_worker');
  await race.bAppears();

  let raced = false;
  race.setOnWake(async () => {
    if (raced) return;
    raced = true;
    // A, whose last look saw no capable worker, takes the woken step before B removes its entry.
    const second = await take();
    expect(second.job.id).toBe(first.job.id);
    await a.handBack(second.job, second.token, place(second.job), missing, undefined);
  });
  await b.look();
  expect(raced).toBe(true);
}

describe('the capability wait race (decision 0031)', () => {
  it('a worker with a stale view reads the registry before it marks: a live capable worker means no second wait', async () => {
    const race = await setUp({ bRegistered: true });
    await replayRace(race);
    const kinds = await eventKinds(race.h, race.sessionId);
    expect(count(kinds, 'waiting_for_worker')).toBe(1);
    expect(count(kinds, 'worker_found')).toBe(1);
    expect(await race.marker()).toBe(0);
    expect((await race.h.engine.getRun(race.runId))?.status).toBe('queued');
  });

  it('a wait marked while the capable worker ended the previous one is ended too: every wait has its end', async () => {
    // B is not in the registry (taken for dead, say): A's second mark is what it sees, and B must end it.
    const race = await setUp({ bRegistered: false });
    await replayRace(race);
    const kinds = await eventKinds(race.h, race.sessionId);
    expect(count(kinds, 'waiting_for_worker')).toBe(2);
    expect(count(kinds, 'worker_found')).toBe(2);
    expect(await race.marker()).toBe(0);
    expect((await race.h.engine.getRun(race.runId))?.status).not.toBe('waiting_for_worker');
    // The step is back in the queue for a capable worker.
    const { job } = await race.take();
    expect(job.data.run_id).toBe(race.runId);
  });

  it('a capable worker that takes a marked step before any of its looks saw it ends the wait in the step, even when the step finishes the run', async () => {
    // The run of `agent` ends in one iteration. A marks it waiting; the capable worker then takes its step off
    // the recheck timer before any of its looks has seen the step's entry. Removing the entry first makes that
    // order certain: no look can end this wait, only the step itself. Before the fix the step finished the
    // run and left the marker, with a waiting_for_worker event no worker_found followed.
    const race = await setUp({ bRegistered: false, agent: 'agent' });
    const { a, take, place, missing, h, runId } = race;
    const first = await take();
    await race.noteOldWait(first.job.id as string);
    expect(await a.missingFor(place(first.job))).toEqual(missing);
    await a.handBack(first.job, first.token, place(first.job), missing, undefined);
    expect(await statusOf(h, runId)).toBe('waiting_for_worker');
    await race.forget(first.job.id as string);
    await race.promote(first.job.id as string);
    await h.startWorker();
    await waitFor(async () => (await statusOf(h, runId)) === 'completed', 60_000, 'the run to complete');
    const kinds = await eventKinds(h, race.sessionId);
    expect(count(kinds, 'waiting_for_worker')).toBe(1);
    expect(count(kinds, 'worker_found')).toBe(1);
    // The wait ended before the step ran: its event comes before the run's end.
    expect(kinds.indexOf('worker_found')).toBeLessThan(kinds.indexOf('run_completed'));
    expect(await race.marker()).toBe(0);
  });
});
