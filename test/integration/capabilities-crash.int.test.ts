import { afterEach, describe, expect, it } from 'vitest';
import type { CrashPointName } from '../../src/workflows/crash-points.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import {
  count,
  eventKinds,
  generationsHarness,
  olderConfig,
  started,
  statusOf,
} from '../helpers/generations.js';
import type { Harness } from '../helpers/harness.js';

// The wait for a worker is a recorded state change (decision 0031): a worker SIGKILLed at each of its crash
// points leaves a run that still waits (or goes on) correctly, with one waiting_for_worker and one
// worker_found event, and completes once a capable worker runs it.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function expectWaitsAndCompletion(
  h: Harness,
  runId: string,
  sessionId: string,
  exactlyOnce: boolean,
): Promise<void> {
  const run = await h.engine.waitForRun(runId, { timeoutMs: 90_000 });
  expect(run.status).toBe('completed');
  expect(run.result).toBe('five');
  expect(run.waiting_for).toBeUndefined();
  const kinds = await eventKinds(h, sessionId);
  // Each wait is recorded once and ended once, in turn. A capable worker that dies right after it ended the
  // wait leaves no live worker that serves the run: until the next one starts, the run rightly waits again.
  const waits = kinds.filter((kind) => kind === 'waiting_for_worker' || kind === 'worker_found');
  expect(waits.length).toBeGreaterThanOrEqual(2);
  expect(waits).toEqual(waits.map((_, index) => (index % 2 === 0 ? 'waiting_for_worker' : 'worker_found')));
  if (exactlyOnce) expect(waits).toEqual(['waiting_for_worker', 'worker_found']);
  expect(count(kinds, 'run_completed')).toBe(1);
  expect(count(kinds, 'error')).toBe(0);
  expect(h.modelCalls()).toHaveLength(2);
}

describe('SIGKILL at the crash points of a wait for a worker', () => {
  it.each([['capability.before_wait_mark'], ['capability.after_wait_mark']] as [CrashPointName][])(
    '%s: an older worker dies as it records the wait',
    async (point) => {
      const h = generationsHarness();
      harness = h;
      const v1 = olderConfig(h);
      const doomed = h.spawnWorker({ configPath: v1, crashAt: point });
      await started(doomed);
      const { runId, sessionId } = await h.engine.startRun({ input: 'add 2 and 3', agent: 'clerk' });
      const exit = await waitForExit(doomed, 60_000);
      expect(exit.signal).toBe('SIGKILL');
      // Another older worker takes the step over, and the run waits (recorded once, whoever recorded it).
      const survivor = h.spawnWorker({ configPath: v1 });
      await waitFor(
        async () => (await statusOf(h, runId)) === 'waiting_for_worker',
        60_000,
        'the run to wait for a worker',
      );
      h.spawnWorker();
      await expectWaitsAndCompletion(h, runId, sessionId, true);
      expect(survivor.output()).not.toContain('crash point');
    },
    180_000,
  );

  it.each([['capability.before_resume'], ['capability.after_resume']] as [CrashPointName][])(
    '%s: a capable worker dies as it ends the wait',
    async (point) => {
      const h = generationsHarness();
      harness = h;
      const older = h.spawnWorker({ configPath: olderConfig(h) });
      await started(older);
      const { runId, sessionId } = await h.engine.startRun({ input: 'add 2 and 3', agent: 'clerk' });
      await waitFor(
        async () => (await statusOf(h, runId)) === 'waiting_for_worker',
        60_000,
        'the run to wait for a worker',
      );
      const doomed = h.spawnWorker({ crashAt: point });
      const exit = await waitForExit(doomed, 60_000);
      expect(exit.signal).toBe('SIGKILL');
      h.spawnWorker();
      await expectWaitsAndCompletion(h, runId, sessionId, point === 'capability.before_resume');
    },
    180_000,
  );
});
