import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// A SIGKILLed worker process's step is taken over by a surviving process as soon as the dead one's heartbeat
// expires (worker.dead_worker_ms, 2 s), not when its job lock expires (lock_duration_ms, 10 s): with the
// default lock settings. A live process whose step simply takes long is never taken over.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const defaults = { lock_duration_ms: 10_000, stalled_interval_ms: 2_000 };

describe('dead worker processes', () => {
  it('a surviving worker takes over a SIGKILLed worker step long before its lock expires', async () => {
    harness = new Harness({
      script: { replies: [{ text: 'finally', delay_ms: 3_000 }] },
      worker: { ...defaults, concurrency: 1 },
    });
    const doomed = harness.spawnWorker();
    await waitFor(() => doomed.output().includes('worker started'), 20_000, 'the first worker');
    const { runId } = await harness.engine.startRun({ input: 'go' });
    await waitFor(() => harness?.modelCalls().length === 1, 20_000, 'the model call');
    const survivor = harness.spawnWorker();
    await waitFor(() => survivor.output().includes('worker started'), 20_000, 'the second worker');
    const killedAt = Date.now();
    await doomed.kill();
    await waitFor(() => harness?.modelCalls().length === 2, 20_000, 'the survivor to call the model again');
    const takenOverMs = Date.parse(harness.modelCalls()[1]?.time ?? '') - killedAt;
    // The lock would have expired 10 s after its last renewal; the heartbeat expires after 2 s.
    expect(takenOverMs).toBeLessThan(7_000);
    expect(survivor.output()).toContain('a worker process died: its steps were released');
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('finally');
  });

  it('never takes over a live worker whose step takes longer than the heartbeat window', async () => {
    harness = new Harness({
      script: { replies: [{ text: 'slow but alive', delay_ms: 6_000 }] },
      worker: { ...defaults, concurrency: 1 },
    });
    const first = harness.spawnWorker();
    const second = harness.spawnWorker();
    await waitFor(
      () => first.output().includes('worker started') && second.output().includes('worker started'),
      20_000,
      'both workers',
    );
    const { runId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(harness.modelCalls()).toHaveLength(1);
    expect(first.output() + second.output()).not.toContain('a worker process died');
  });
});
