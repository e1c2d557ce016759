import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { killTheCaller, started } from '../helpers/generations.js';
import { Harness } from '../helpers/harness.js';

// A SIGKILLed worker process's step is taken over by a surviving process as soon as the dead one's heartbeat
// expires (worker.dead_worker_ms, 2 s), not when its job lock expires. The proof waits on events, not on a
// stopwatch (a busy machine stretches every duration): the lock is made so long (10 minutes) that nothing
// but the heartbeat can explain a takeover within the test, and the survivor logs the release. A live
// process whose step simply takes long is never taken over.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const longLock = { lock_duration_ms: 600_000, stalled_interval_ms: 2_000 };

describe('dead worker processes', () => {
  it('a surviving worker takes over a SIGKILLed worker step long before its lock expires', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'finally', delay_ms: 4_000 }] },
      worker: { ...longLock, concurrency: 1 },
    });
    harness = h;
    // Both started before the run, so the step's call is in flight when its worker is killed, however long
    // a start takes; whichever took the step is the one killed.
    const workers = [h.spawnWorker(), h.spawnWorker()];
    await started(...workers);
    const { runId } = await h.engine.startRun({ input: 'go' });
    const survivor = await killTheCaller(h, workers, 60_000);
    // The released job wakes the survivor's fetch at once (BullMQ's marker), so its model call can be seen
    // before its log line has come through the pipe: wait for the line rather than read the output once.
    await waitFor(
      () => survivor.output().includes('a worker process died: its steps were released'),
      30_000,
      'the takeover to be logged',
    );
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('finally');
  }, 180_000);

  it('never takes over a live worker whose step takes longer than the heartbeat window', async () => {
    // The step lasts twice the window; the window is wider than the default so that a loaded machine
    // pausing a process for a moment is not taken for a death.
    const h = new Harness({
      script: { replies: [{ text: 'slow but alive', delay_ms: 8_000 }] },
      worker: { ...longLock, concurrency: 1, dead_worker_ms: 4_000 },
    });
    harness = h;
    const first = h.spawnWorker();
    const second = h.spawnWorker();
    await started(first, second);
    const { runId } = await h.engine.startRun({ input: 'go' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 90_000 });
    expect(run.status).toBe('completed');
    expect(h.modelCalls()).toHaveLength(1);
    expect(first.output() + second.output()).not.toContain('a worker process died');
  }, 180_000);
});
