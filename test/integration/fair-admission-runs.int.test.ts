import { afterEach, describe, expect, it } from 'vitest';
import { admissionKeys, shardOf } from '../../src/redis/keys.js';
import { stepJobId } from '../../src/workflows/index.js';
import { firstCalls } from '../helpers/call-order.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

/**
 * Fair admission and token budgets with real workers (decision 0038): queued root runs wait holding no
 * worker, with their reason shown; a freed slot goes to the tenant with the least share; a worker SIGKILLed
 * between a slot's release and the admitted run's wake-up leaves no run stuck and none admitted twice; a
 * tenant past its tokens_per_minute has its steps parked.
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('fair admission of runs', () => {
  it('queues runs past the cap with the reason shown, and admits the next by fair share as runs end', async () => {
    const h = new Harness({
      script: { default: { text: 'done', delay_ms: 400 } },
      config: { admission: { max_active_runs: 1, recheck_s: 2 }, tenants: { a: {}, b: {} } },
    });
    harness = h;
    const a1 = await h.engine.startRun({ input: 'a one', tenant: 'a' });
    const a2 = await h.engine.startRun({ input: 'a two', tenant: 'a' });
    const a3 = await h.engine.startRun({ input: 'a three', tenant: 'a' });
    const b1 = await h.engine.startRun({ input: 'b one', tenant: 'b' });
    const queued = await h.engine.getRun(a3.runId);
    expect(queued?.status).toBe('queued');
    expect(queued?.queued_reason).toMatchObject({ reason: 'deployment_limit', ahead: 1 });
    expect(queued?.queued_reason?.message).toContain('1 of its 1 active runs');
    expect((await h.engine.getRun(a1.runId))?.queued_reason).toBeNull();

    await h.startWorker();
    for (const run of [a1, a2, a3, b1]) {
      expect((await h.engine.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    }
    // First come would run B last; fair share gives B the second slot freed (A's virtual time 2, B's 1).
    expect(firstCalls(h)).toEqual([a1.runId, a2.runId, b1.runId, a3.runId]);
    // Never two at once: each call started after the previous run's reply.
    const keys = admissionKeys(h.engine.space);
    await waitFor(async () => (await h.redis.hlen(keys.active)) === 0, 10_000, 'every slot freed');
    expect(await h.redis.hgetall(keys.counts)).toEqual({});
  }, 60_000);

  it('the sweep frees the slot of a run that ended (or is gone) without freeing it', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      config: { admission: { max_active_runs: 1, recheck_s: 1 } },
    });
    harness = h;
    const admission = h.engine.admission;
    if (!admission) throw new Error('admission is configured');
    // A slot taken by a run whose process died before it was written or released.
    expect(
      await admission.admit({
        id: 'r-gone',
        tenant: 'default',
        priority: 5,
        created_at: new Date().toISOString(),
      }),
    ).toBe(true);
    const waiting = await h.engine.startRun({ input: 'waits for the slot' });
    expect((await h.engine.getRun(waiting.runId))?.status).toBe('queued');
    expect(await h.engine.sweepAdmission()).toBe(1);
    await h.startWorker();
    expect((await h.engine.waitForRun(waiting.runId, { timeoutMs: 30_000 })).status).toBe('completed');
  }, 60_000);

  it('a worker SIGKILLed between freeing a slot and waking the run admitted into it: the run starts once', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      config: { admission: { max_active_runs: 1, recheck_s: 2, sweep_s: 1 } },
    });
    harness = h;
    const first = await h.engine.startRun({ input: 'first' });
    const second = await h.engine.startRun({ input: 'second' });
    const doomed = h.spawnWorker({ crashAt: 'admission.after_release' });
    const exit = await doomed.exited;
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    expect(doomed.output()).toContain('crash point admission.after_release reached');
    // The slot went to the second run in the same script that freed it; its wake-up died with the worker.
    expect((await h.engine.getRun(first.runId))?.status).toBe('completed');
    expect(await h.engine.admission?.isAdmitted(second.runId)).toBe(true);

    const survivor = h.spawnWorker();
    const run = await h.engine.waitForRun(second.runId, { timeoutMs: 40_000 });
    expect(run.status, survivor.output()).toBe('completed');
    const calls = h.modelCalls();
    expect(calls.filter((call) => call.run_id === first.runId)).toHaveLength(1);
    expect(calls.filter((call) => call.run_id === second.runId)).toHaveLength(1);
    const keys = admissionKeys(h.engine.space);
    await waitFor(async () => (await h.redis.hlen(keys.active)) === 0, 20_000, 'every slot freed');
  }, 90_000);
});

describe('fair admission under SIGKILL at the admission of a first step', () => {
  it('a worker killed right after its first step was admitted: the run goes on once, the queued one after it', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      config: { admission: { max_active_runs: 1, recheck_s: 2, sweep_s: 1 } },
    });
    harness = h;
    const first = await h.engine.startRun({ input: 'first' });
    const second = await h.engine.startRun({ input: 'second' });
    expect((await h.engine.getRun(second.runId))?.queued_reason?.reason).toBe('deployment_limit');
    const doomed = h.spawnWorker({ crashAt: 'admission.after_admit' });
    const exit = await doomed.exited;
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    expect(doomed.output()).toContain('crash point admission.after_admit reached');
    expect(h.modelCalls()).toHaveLength(0);

    const survivor = h.spawnWorker();
    for (const run of [first, second]) {
      const ended = await h.engine.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(ended.status, survivor.output()).toBe('completed');
    }
    const calls = h.modelCalls().map((call) => call.run_id);
    expect(calls).toEqual([first.runId, second.runId]);
    const keys = admissionKeys(h.engine.space);
    await waitFor(async () => (await h.redis.hlen(keys.active)) === 0, 20_000, 'every slot freed');
  }, 120_000);
});

describe('a run that yields its slot at its first step (decision 0048)', () => {
  it('a worker SIGKILLed right after a first step yielded its slot to another tenant: every run goes on once', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      config: { admission: { max_active_runs: 2, recheck_s: 2, sweep_s: 1 } },
    });
    harness = h;
    const a0 = await h.engine.startRun({ input: 'a zero', tenant: 'a' });
    const a1 = await h.engine.startRun({ input: 'a one', tenant: 'a' });
    const b0 = await h.engine.startRun({ input: 'b zero', tenant: 'b' });
    expect((await h.engine.getRun(b0.runId))?.status).toBe('queued');
    const admission = h.engine.admission;
    if (!admission) throw new Error('admission is configured');
    expect(await admission.isAdmitted(b0.runId)).toBe(false);
    // The first of A's steps to start finds A holding both slots while B waits with none: it yields, B's run
    // is admitted, and the worker dies before it wakes B's step (or parks its own).
    const doomed = h.spawnWorker({ crashAt: 'admission.after_admit' });
    const exit = await doomed.exited;
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    expect(h.modelCalls()).toHaveLength(0);
    expect(await admission.isAdmitted(b0.runId)).toBe(true);

    const survivor = h.spawnWorker();
    for (const run of [a0, a1, b0]) {
      const ended = await h.engine.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(ended.status, survivor.output()).toBe('completed');
    }
    const calls = h.modelCalls().map((call) => call.run_id);
    expect([...calls].sort()).toEqual([a0.runId, a1.runId, b0.runId].sort());
    const keys = admissionKeys(h.engine.space);
    await waitFor(async () => (await h.redis.hlen(keys.active)) === 0, 20_000, 'every slot freed');
    expect(await h.redis.hgetall(keys.counts)).toEqual({});
  }, 120_000);
});

describe('a slot freed at once, not at the next sweep', () => {
  it('a run ended by an interrupting message frees its slot: the queued run is admitted in that call', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      // No sweep and no recheck within the test: only the interrupt's own release can admit the queued run.
      config: { admission: { max_active_runs: 2, recheck_s: 3600, sweep_s: 3600 } },
    });
    harness = h;
    const admission = h.engine.admission;
    if (!admission) throw new Error('admission is configured');
    const interrupted = await h.engine.startRun({ input: 'long work', tenant: 'a' });
    const other = await h.engine.startRun({ input: 'other work', tenant: 'a' });
    const waiting = await h.engine.startRun({ input: 'waits for a slot', tenant: 'a' });
    expect(await admission.isAdmitted(interrupted.runId)).toBe(true);
    expect(await admission.isAdmitted(other.runId)).toBe(true);
    expect(await admission.isAdmitted(waiting.runId)).toBe(false);

    const sent = await h.engine.sendMessage({
      sessionId: interrupted.sessionId,
      input: 'instead',
      onBusy: 'interrupt',
    });
    expect(sent).toMatchObject({ delivery: 'interrupted', interruptedRunId: interrupted.runId });
    expect((await h.engine.getRun(interrupted.runId))?.status).toBe('cancelled');
    expect(await admission.isAdmitted(interrupted.runId)).toBe(false);
    // The oldest queued run of the tenant took the slot (the interrupting message's run asks when it starts).
    expect(await admission.isAdmitted(waiting.runId)).toBe(true);
    expect((await h.engine.getRun(waiting.runId))?.queued_reason).toBeNull();
  }, 60_000);

  it('a finished run still holding its slot (its release was lost) frees it when retention removes it', async () => {
    const h = new Harness({
      script: { default: { text: 'done' } },
      config: {
        admission: { max_active_runs: 1, recheck_s: 3600, sweep_s: 3600 },
        retention: { finished_runs_s: 1, idle_sessions_s: 0, sweep_interval_s: 1 },
      },
    });
    harness = h;
    const admission = h.engine.admission;
    if (!admission) throw new Error('admission is configured');
    await h.startWorker();
    const ended = await h.engine.startRun({ input: 'ends', tenant: 'a' });
    const record = await h.engine.waitForRun(ended.runId, { timeoutMs: 30_000 });
    expect(record.status).toBe('completed');
    // As if its process died between its final commit and its release: the slot is taken again.
    expect(await admission.admit(record)).toBe(true);
    const waiting = await h.engine.startRun({ input: 'waits for the slot', tenant: 'b' });
    expect((await h.engine.getRun(waiting.runId))?.status).toBe('queued');
    // The admission sweep is an hour away: retention's removal of the ended run frees the slot.
    expect((await h.engine.waitForRun(waiting.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(await h.engine.getRun(ended.runId)).toBeUndefined();
  }, 60_000);
});

describe('token budgets', () => {
  it("parks a tenant's step past its tokens_per_minute, holding no worker and spending no attempt", async () => {
    const h = new Harness({
      script: { default: { text: 'done', usage: { input_tokens: 40, output_tokens: 30 } } },
      worker: { concurrency: 1 },
      config: { tenants: { thrifty: { tokens_per_minute: 50 } } },
    });
    harness = h;
    await h.startWorker();
    const spent = await h.engine.startRun({ input: 'uses the budget', tenant: 'thrifty' });
    expect((await h.engine.waitForRun(spent.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const over = await h.engine.startRun({ input: 'over the budget', tenant: 'thrifty' });
    const jobId = stepJobId.iteration(over.runId, 1);
    const queue = h.engine.queues.queue(shardOf(h.engine.space, over.sessionId));
    await waitFor(
      async () =>
        (await queue.getJob(jobId))?.delay !== undefined &&
        (await (await queue.getJob(jobId))?.isDelayed()) === true,
      20_000,
      'the step parked',
    );
    // Another tenant is not held back (and with concurrency 1, no worker is held by the parked step).
    const other = await h.engine.startRun({ input: 'another tenant', tenant: 'generous' });
    expect((await h.engine.waitForRun(other.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const job = await queue.getJob(jobId);
    expect(await job?.isDelayed()).toBe(true);
    expect(job?.attemptsMade).toBe(0);
    // Parked until the window (a minute) lets the 70 tokens spent out.
    expect(job?.delay).toBeGreaterThan(30_000);
    expect(h.modelCalls().filter((call) => call.run_id === over.runId)).toHaveLength(0);
    expect((await h.engine.getRun(over.runId))?.status).toBe('queued');
  }, 60_000);
});
