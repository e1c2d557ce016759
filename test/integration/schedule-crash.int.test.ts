import { afterEach, describe, expect, it } from 'vitest';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';
import { scheduledRuns } from '../helpers/scheduled-runs.js';

// A worker SIGKILLed at each crash point of a fire (decision 0036): after its decision is recorded and before
// its run is started, and after its run is started and before the fire's job completes. Another worker takes
// the fire over when the lock lapses; the fire still starts exactly one run, which completes.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('crash points of a schedule fire', () => {
  for (const point of ['schedule.after_decision', 'schedule.after_run_start'] as const) {
    it(`${point}: the fire taken over starts one run`, async () => {
      const h = new Harness({ script: { replies: [{ text: 'fired once' }] } });
      harness = h;
      await h.engine.schedules().create({
        id: 'crashy',
        every_s: 2,
        agent: 'agent',
        input: 'once please',
        timezone: 'UTC',
        overlap: 'allow',
        catch_up: 'once',
        missed_after_s: 120,
      });
      const doomed = h.spawnWorker({ crashAt: point });
      const exit = await waitForExit(doomed, 60_000);
      expect(exit.signal).toBe('SIGKILL');
      expect(doomed.output()).toContain(`crash point ${point} reached`);
      const before = await scheduledRuns(h.redis, h.prefix);
      const decided = await h.engine.schedules().recentFires('crashy', 10);
      // The fire the worker died in: decided (a run), and its run started only past the decision.
      const crashed = decided.at(-1);
      expect(crashed?.decision.kind).toBe('run');
      expect(before).toHaveLength(point === 'schedule.after_decision' ? 0 : 1);

      const survivor = h.spawnWorker();
      const crashedAt = new Date(crashed?.fireAtMs ?? 0).toISOString();
      await waitFor(
        async () => {
          const runs = await scheduledRuns(h.redis, h.prefix);
          return runs.some((run) => run.fireAt === crashedAt) && runs.some((run) => run.fireAt > crashedAt);
        },
        60_000,
        'the survivor to take the crashed fire over, and to fire again',
      );
      await h.engine.schedules().setPaused('crashy', true);
      const runs = await scheduledRuns(h.redis, h.prefix);
      const ofCrashed = runs.filter((run) => run.fireAt === crashedAt);
      expect(ofCrashed).toHaveLength(1);
      expect(new Set(runs.map((run) => run.fireAt)).size).toBe(runs.length);
      const done = await h.engine.waitForRun(ofCrashed[0]?.runId ?? '', { timeoutMs: 60_000 });
      expect(done.status).toBe('completed');
      expect(done.result).toBe('fired once');
      expect(survivor.output()).toContain('schedule fired');
    }, 180_000);
  }
});
