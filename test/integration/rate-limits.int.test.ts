import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

it('two worker processes sharing a provider never exceed its rpm, and every run completes', async () => {
  const windowMs = 1500;
  const rpm = 2;
  harness = new Harness({
    script: { default: { text: 'done' } },
    provider: { rate_limit: { rpm, window_ms: windowMs } },
    worker: { concurrency: 1 },
  });
  const workers = [harness.spawnWorker(), harness.spawnWorker()];
  for (const worker of workers) {
    await waitFor(() => worker.output().includes('worker started'), 20_000, 'the workers to start');
  }
  const runs = await Promise.all(
    Array.from({ length: 6 }, (_unused, index) => harness?.engine.startRun({ input: `task ${index}` })),
  );
  for (const started of runs) {
    const run = await harness.engine.waitForRun(started?.runId ?? '', { timeoutMs: 30_000 });
    expect(run.status, workers.map((worker) => worker.output()).join('\n')).toBe('completed');
  }
  const times = harness
    .modelCalls()
    .map((call) => Date.parse((call as unknown as { time: string }).time))
    .sort((a, b) => a - b);
  expect(times).toHaveLength(6);
  // In every window of windowMs, at most rpm requests reached the model.
  for (const [index, start] of times.entries()) {
    const inWindow = times.slice(index).filter((time) => time < start + windowMs);
    expect(
      inWindow.length,
      `calls at ${times.map((time) => time - (times[0] ?? 0)).join(', ')} ms`,
    ).toBeLessThanOrEqual(rpm);
  }
  // Both processes took part: the limit held across processes, not per process.
  const committing = workers.filter((worker) => worker.output().includes('iteration committed'));
  expect(committing).toHaveLength(2);
});

it('output_tpm holds model calls back once the replies in the window have used it', async () => {
  // Each reply reports 50 output tokens against a budget of 100 a window: two calls fill it, and the next
  // waits until the first reply has left the window. Nothing else limits the calls.
  const windowMs = 1500;
  const outputTpm = 100;
  const outputPerReply = 50;
  harness = new Harness({
    script: { default: { text: 'done', usage: { input_tokens: 5, output_tokens: outputPerReply } } },
    provider: { rate_limit: { output_tpm: outputTpm, window_ms: windowMs } },
    worker: { concurrency: 1 },
  });
  await harness.startWorker();
  const runs = await Promise.all(
    Array.from({ length: 4 }, (_unused, index) => harness?.engine.startRun({ input: `task ${index}` })),
  );
  for (const started of runs) {
    const run = await harness.engine.waitForRun(started?.runId ?? '', { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
  }
  const times = harness
    .modelCalls()
    .map((call) => Date.parse(call.time))
    .sort((a, b) => a - b);
  expect(times).toHaveLength(4);
  // In every window, the calls made used at most the budget: two replies of 50.
  for (const [index, start] of times.entries()) {
    const inWindow = times.slice(index).filter((time) => time < start + windowMs);
    expect(
      inWindow.length * outputPerReply,
      `calls at ${times.map((time) => time - (times[0] ?? 0)).join(', ')} ms`,
    ).toBeLessThanOrEqual(outputTpm);
  }
  // The third call waited for the first reply to leave the window.
  expect((times[2] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(windowMs);
});
