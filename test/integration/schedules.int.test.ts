import { afterEach, describe, expect, it } from 'vitest';
import { ScheduleStore } from '../../src/redis/schedule-store.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';
import { scheduledRuns } from '../helpers/scheduled-runs.js';

// Schedules on real Redis and BullMQ's job schedulers (decision 0036): what a fire starts, and what it does
// not, read from the run records themselves.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('schedules', () => {
  it('starts a run per fire, with the schedule and fire time as its origin', async () => {
    const h = new Harness({ script: { replies: [{ text: 'done' }] } });
    harness = h;
    await h.startWorker();
    const created = await h.engine.schedules().create({
      id: 'tick',
      every_s: 1,
      agent: 'agent',
      input: 'tick',
      timezone: 'UTC',
      overlap: 'allow',
      catch_up: 'none',
      missed_after_s: 120,
    });
    expect(created.nextFireAt).toBeDefined();
    await waitFor(async () => (await scheduledRuns(h.redis, h.prefix)).length >= 3, 30_000, 'three fires');
    await h.engine.schedules().setPaused('tick', true);
    const runs = await scheduledRuns(h.redis, h.prefix);
    const view = await h.engine.getRun(runs[0]?.runId ?? '');
    expect(view?.origin).toEqual({ kind: 'schedule', schedule: 'tick', fire_at: runs[0]?.fireAt });
    const fires = runs.map((run) => Date.parse(run.fireAt));
    // On the interval's slots, each once. (A fire taken up more than an interval late, on a machine too
    // busy to run the worker's loop, makes BullMQ skip the slots in between: decision 0036.)
    expect(new Set(fires).size).toBe(fires.length);
    for (let index = 1; index < fires.length; index += 1) {
      expect(((fires[index] ?? 0) - (fires[index - 1] ?? 0)) % 1000).toBe(0);
    }
    const done = await h.engine.waitForRun(runs[0]?.runId ?? '', { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.result).toBe('done');
  }, 60_000);

  it('overlap skip starts nothing while the previous run is unfinished; allow starts anyway', async () => {
    const h = new Harness({ script: { replies: [{ text: 'slow', delay_ms: 2_500 }] } });
    harness = h;
    await h.startWorker();
    const base = {
      every_s: 1,
      agent: 'agent',
      input: 'slow task',
      timezone: 'UTC',
      catch_up: 'none',
      missed_after_s: 120,
    } as const;
    await h.engine.schedules().create({ ...base, id: 'skipper', overlap: 'skip' });
    await h.engine.schedules().create({ ...base, id: 'allower', overlap: 'allow' });
    await waitFor(
      async () =>
        (await scheduledRuns(h.redis, h.prefix)).filter((run) => run.schedule === 'allower').length >= 6,
      60_000,
      'six fires of the allowing schedule',
    );
    await h.engine.schedules().setPaused('skipper', true);
    await h.engine.schedules().setPaused('allower', true);
    const runs = await scheduledRuns(h.redis, h.prefix);
    const skipper = runs.filter((run) => run.schedule === 'skipper');
    const allower = runs.filter((run) => run.schedule === 'allower');
    // Runs of 2.5 s every second: the allowing schedule overlaps them, the skipping one never does.
    expect(skipper.length).toBeGreaterThanOrEqual(1);
    expect(skipper.length).toBeLessThan(allower.length);
    for (let index = 1; index < skipper.length; index += 1) {
      const before = await h.engine.waitForRun(skipper[index - 1]?.runId ?? '', { timeoutMs: 30_000 });
      expect(Date.parse(skipper[index]?.record.created_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(before.finished_at ?? ''),
      );
    }
    const fires = await h.engine.schedules().recentFires('skipper', 100);
    expect(fires.some((fire) => fire.decision.kind === 'skip' && fire.decision.reason === 'overlap')).toBe(
      true,
    );
    expect(fires.filter((fire) => fire.decision.kind === 'run')).toHaveLength(skipper.length);
  }, 120_000);

  it('overlap queue starts the waiting fire once the previous run ends, and keeps one fire waiting at most', async () => {
    const h = new Harness({ script: { replies: [{ text: 'slow', delay_ms: 3_000 }] } });
    harness = h;
    await h.startWorker();
    await h.engine.schedules().create({
      id: 'queuer',
      every_s: 1,
      agent: 'agent',
      input: 'queued task',
      timezone: 'UTC',
      overlap: 'queue',
      catch_up: 'none',
      missed_after_s: 120,
    });
    await waitFor(async () => (await scheduledRuns(h.redis, h.prefix)).length >= 2, 60_000, 'two runs');
    await h.engine.schedules().setPaused('queuer', true);
    const runs = await scheduledRuns(h.redis, h.prefix);
    const first = await h.engine.waitForRun(runs[0]?.runId ?? '', { timeoutMs: 30_000 });
    // The second started when the first ended (within the recheck), not at its fire time, and never before.
    const secondCreated = Date.parse(runs[1]?.record.created_at ?? '');
    expect(secondCreated).toBeGreaterThanOrEqual(Date.parse(first.finished_at ?? ''));
    const fires = await h.engine.schedules().recentFires('queuer', 100);
    expect(fires.some((fire) => fire.decision.kind === 'skip' && fire.decision.reason === 'queue_full')).toBe(
      true,
    );
  }, 120_000);

  it('pause starts nothing until resume; resume fires again', async () => {
    const h = new Harness({ script: { replies: [{ text: 'done' }] } });
    harness = h;
    await h.startWorker();
    const spec = {
      id: 'pausable',
      every_s: 1,
      agent: 'agent',
      input: 'x',
      timezone: 'UTC',
      overlap: 'allow',
      catch_up: 'once',
      missed_after_s: 120,
    } as const;
    await h.engine.schedules().create(spec);
    await waitFor(async () => (await scheduledRuns(h.redis, h.prefix)).length >= 1, 30_000, 'a first fire');
    const paused = await h.engine.schedules().setPaused('pausable', true);
    expect(paused.record.paused).toBe(true);
    expect(paused.nextFireAt).toBeUndefined();
    const atPause = (await scheduledRuns(h.redis, h.prefix)).length;
    const pausedAt = Date.now();
    await sleep(3_500);
    // At most a fire already taken up when the pause came.
    const duringPause = (await scheduledRuns(h.redis, h.prefix)).filter(
      (run) => Date.parse(run.fireAt) > pausedAt + 500,
    );
    expect(duringPause).toEqual([]);
    const resumed = await h.engine.schedules().setPaused('pausable', false);
    expect(resumed.nextFireAt).toBeDefined();
    await waitFor(
      async () => (await scheduledRuns(h.redis, h.prefix)).length >= atPause + 2,
      30_000,
      'fires after the resume',
    );
    const late = (await scheduledRuns(h.redis, h.prefix)).filter(
      (run) => Date.parse(run.fireAt) > pausedAt + 500 && Date.parse(run.fireAt) < pausedAt + 3_500,
    );
    // Fires due while paused are not caught up, whatever catch_up says.
    expect(late).toEqual([]);
    await h.engine.schedules().setPaused('pausable', true);
  }, 60_000);

  for (const catchUp of ['once', 'none'] as const) {
    it(`catch_up ${catchUp}: fires missed while no process ran start ${catchUp === 'once' ? 'one run' : 'nothing'}`, async () => {
      const h = new Harness({ script: { replies: [{ text: 'done' }] } });
      harness = h;
      // No worker: the fires at +2 s and +4 s pass with nothing to take them up.
      await h.engine.schedules().create({
        id: 'nightly',
        every_s: 2,
        agent: 'agent',
        input: 'catch up',
        timezone: 'UTC',
        overlap: 'allow',
        catch_up: catchUp,
        missed_after_s: 1,
      });
      await sleep(5_500);
      const workerStartedAt = Date.now();
      await h.startWorker();
      await waitFor(
        async () =>
          (await scheduledRuns(h.redis, h.prefix)).some((run) => Date.parse(run.fireAt) > workerStartedAt),
        30_000,
        'a fire after the worker started',
      );
      await h.engine.schedules().setPaused('nightly', true);
      const missed = (await scheduledRuns(h.redis, h.prefix)).filter(
        (run) => Date.parse(run.fireAt) < workerStartedAt,
      );
      expect(missed).toHaveLength(catchUp === 'once' ? 1 : 0);
      const fires = await h.engine.schedules().recentFires('nightly', 100);
      if (catchUp === 'none') {
        expect(fires.some((fire) => fire.decision.kind === 'skip' && fire.decision.reason === 'missed')).toBe(
          true,
        );
      }
    }, 60_000);
  }

  it('records one decision per fire: a fire decided again reads it, a decision from a stale read is refused', async () => {
    const h = new Harness({ script: { replies: [{ text: 'done' }] } });
    harness = h;
    const store = new ScheduleStore(h.redis, h.engine.space);
    try {
      await h.engine.schedules().create({
        id: 'decided',
        cron: '0 7 * * *',
        agent: 'agent',
        input: 'x',
        timezone: 'UTC',
        overlap: 'skip',
        catch_up: 'none',
        missed_after_s: 120,
      });
      const fireAt = Date.parse('2030-01-01T07:00:00.000Z');
      const read = await store.read('decided');
      if (!read) throw new Error('no schedule');
      // Two processes decided from the same read: the first decision stands, the second gets it back.
      expect(await store.decide('decided', fireAt, read, 'run:run_first')).toEqual({
        kind: 'run',
        runId: 'run_first',
      });
      expect(await store.decide('decided', fireAt, read, 'skip:overlap')).toEqual({
        kind: 'run',
        runId: 'run_first',
      });
      // The next fire decided from the read before that run was recorded: stale, decide again.
      expect(await store.decide('decided', fireAt + 86_400_000, read, 'run:run_second')).toBe('stale');
      const again = await store.read('decided');
      expect(again?.lastRun).toBe('run_first');
      if (!again) throw new Error('no schedule');
      // A pause between the read and the decision makes it stale too.
      await h.engine.schedules().setPaused('decided', true);
      expect(await store.decide('decided', fireAt + 86_400_000, again, 'run:run_second')).toBe('stale');
      await h.engine.schedules().remove('decided');
      expect(await store.decide('decided', fireAt + 86_400_000, again, 'run:run_second')).toBe('gone');
    } finally {
      await store.close();
    }
  });

  it('config schedules are created on start and converge when processes start together', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'done' }] },
      config: {
        schedules: [
          {
            id: 'from-config',
            cron: '0 7 * * 1-5',
            timezone: 'Europe/Paris',
            agent: 'agent',
            input: 'morning',
          },
        ],
      },
    });
    harness = h;
    const engines = await Promise.all(
      [0, 1, 2, 3].map(() => h.engine.schedules().syncConfig(h.loaded.config.schedules)),
    );
    expect(engines).toHaveLength(4);
    const listed = await h.engine.schedules().list();
    expect(listed.map((schedule) => schedule.record.spec.id)).toEqual(['from-config']);
    const next = new Date(listed[0]?.nextFireAt ?? '');
    // 07:00 in Paris is 05:00 or 06:00 UTC, on a weekday.
    expect([5, 6]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(0);
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
    expect(listed[0]?.record.source).toBe('config');
  }, 30_000);
});
