import { afterEach, describe, expect, it } from 'vitest';
import { shardOf } from '../../src/redis/keys.js';
import { readQueueCounts } from '../../src/redis/run-inspection.js';
import { stepJobId } from '../../src/workflows/index.js';
import { firstCalls } from '../helpers/call-order.js';
import { Harness } from '../helpers/harness.js';

/**
 * The lane of queued runs (decision 0053): while a root run waits for its admission, its first step's
 * recheck sits behind every step of an admitted run in BullMQ's order, so a tenant's backlog of queued runs,
 * whose rechecks come due together, never delays another tenant's admitted run; an admitted run's step
 * leaves that lane wherever it is.
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type StartedRun = Awaited<ReturnType<Harness['engine']['startRun']>>;

/**
 * `count` runs under a cap of one slot on a worker of concurrency 1 (not started yet): the first admitted, the
 * others queued, with every parked recheck promoted, so the queued runs' steps wait in the lane.
 */
async function queuedBehindOne(count: number) {
  const h = new Harness({
    script: { default: { text: 'done' } },
    config: { admission: { max_active_runs: 1, recheck_s: 30 }, worker: { concurrency: 1 } },
  });
  harness = h;
  const names = ['first', 'second', 'third'];
  const runs: StartedRun[] = [];
  for (let index = 0; index < count; index += 1)
    runs.push(await h.engine.startRun({ input: names[index] ?? `run ${index + 1}` }));
  const queue = h.engine.queues.queue(shardOf(h.engine.space, runs[0]?.sessionId ?? ''));
  for (const job of await queue.getDelayed()) await job.promote();
  return { h, queue, runs };
}

describe('the lane of queued runs', () => {
  it("an admitted run's step runs before the rechecks of another tenant's queued runs that came due first", async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      // One step at a time: the order the worker takes them in is the order they run in.
      config: {
        admission: { max_active_runs: 2, recheck_s: 30 },
        tenants: { a: {}, b: {} },
        worker: { concurrency: 1 },
      },
    });
    harness = h;
    const a1 = await h.engine.startRun({ input: 'a one', tenant: 'a' });
    const a2 = await h.engine.startRun({ input: 'a two', tenant: 'a' });
    const backlog = [];
    for (let index = 0; index < 6; index += 1)
      backlog.push(await h.engine.startRun({ input: `a queued ${index}`, tenant: 'a' }));
    const queue = h.engine.queues.queue(shardOf(h.engine.space, a1.sessionId));
    const firstStep = (runId: string) => stepJobId.iteration(runId, 1);
    // A's queued runs' rechecks come due, moved as their timer would move them (BullMQ's promote of a
    // delayed job puts it where its priority says, as the promotion of due jobs does).
    for (const job of await queue.getDelayed()) await job.promote();
    const prioritized = (await queue.getJobs(['prioritized'])).map((job) => job.id);
    expect(prioritized.sort()).toEqual(backlog.map((run) => firstStep(run.runId)).sort());
    expect((await queue.getWaiting()).map((job) => job.id).sort()).toEqual(
      [firstStep(a1.runId), firstStep(a2.runId)].sort(),
    );

    // B comes while A holds both slots; A's first admitted run ends (cancelled): its slot goes to B.
    const b1 = await h.engine.startRun({ input: 'b one', tenant: 'b' });
    expect((await h.engine.getRun(b1.runId))?.status).toBe('queued');
    await h.engine.cancelRun(a1.runId);
    expect(await h.engine.admission?.isAdmitted(b1.runId)).toBe(true);
    expect((await queue.getWaiting()).map((job) => job.id)).toContain(firstStep(b1.runId));

    await h.startWorker();
    for (const run of [a2, b1]) {
      expect((await h.engine.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    }
    // B's run was woken after A's six rechecks came due, and still ran before any of them was looked at.
    const b1Job = await queue.getJob(firstStep(b1.runId));
    const backlogJobs = await Promise.all(backlog.map((run) => queue.getJob(firstStep(run.runId))));
    for (const job of backlogJobs) {
      expect(job?.processedOn ?? Number.POSITIVE_INFINITY).toBeGreaterThanOrEqual(b1Job?.processedOn ?? 0);
    }
    for (const run of backlog)
      expect((await h.engine.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(firstCalls(h).slice(0, 2).sort()).toEqual([a2.runId, b1.runId].sort());
    expect(h.modelCalls()).toHaveLength(2 + backlog.length);
  }, 60_000);

  it("a queued run admitted while its recheck waits in the lane moves to the admitted runs' order", async () => {
    const { h, queue, runs } = await queuedBehindOne(3);
    const [first, second, third] = runs as [StartedRun, StartedRun, StartedRun];
    const secondStep = stepJobId.iteration(second.runId, 1);
    expect(await queue.getJobState(secondStep)).toBe('prioritized');
    // GET /v1/system and the console split the lane by step kind too: the two queued runs' iterations.
    const [counts] = await readQueueCounts(h.redis, h.engine.space, [queue]);
    expect(counts?.counts).toMatchObject({ waiting: 1, prioritized: 2 });
    expect(counts?.by_kind).toEqual({ iteration: { waiting: 1, prioritized: 2 } });
    // The first run's end admits the second: its step leaves the lane for the wait list; the third stays.
    await h.engine.cancelRun(first.runId);
    expect(await queue.getJobState(secondStep)).toBe('waiting');
    expect((await queue.getJob(secondStep))?.priority).toBe(0);
    expect(await queue.getJobState(stepJobId.iteration(third.runId, 1))).toBe('prioritized');
    await h.startWorker();
    for (const run of [second, third]) {
      expect((await h.engine.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    }
    expect(firstCalls(h)).toEqual([second.runId, third.runId]);
  }, 60_000);

  it('the sweep wakes an admitted run whose wake-up was lost while its step waited in the lane', async () => {
    const { h, queue, runs } = await queuedBehindOne(2);
    const [first, second] = runs as [StartedRun, StartedRun];
    const secondStep = stepJobId.iteration(second.runId, 1);
    await h.engine.cancelRun(first.runId);
    expect(await h.engine.admission?.isAdmitted(second.runId)).toBe(true);
    // As if the process that admitted it had died before its wake-up: the step is back in the lane.
    await (await queue.getJob(secondStep))?.changePriority({ priority: 1 });
    expect(await queue.getJobState(secondStep)).toBe('prioritized');
    expect(await h.engine.sweepAdmission()).toBe(0);
    expect(await queue.getJobState(secondStep)).toBe('waiting');
    expect((await queue.getJob(secondStep))?.priority).toBe(0);
    // A second sweep leaves a step already in the admitted runs' order where it is.
    await h.engine.sweepAdmission();
    expect(await queue.getJobState(secondStep)).toBe('waiting');
    await h.startWorker();
    expect((await h.engine.waitForRun(second.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(h.modelCalls().map((call) => call.run_id)).toEqual([second.runId]);
  }, 60_000);
});
