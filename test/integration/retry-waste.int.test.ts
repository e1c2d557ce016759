import { afterEach, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const script: Script = { replies: [{ text: 'paid twice', usage: { input_tokens: 300, output_tokens: 20 } }] };

it('a model call whose attempt died before its reply was recorded is counted apart as retry waste', async () => {
  harness = new Harness({ script, config: { pricing: { test: { input: 10, output: 10 } } } });
  const { runId } = await harness.engine.startRun({ input: 'go' });
  const doomed = harness.spawnWorker({ crashAt: 'iteration.after_model_call' });
  expect((await waitForExit(doomed, 30_000)).signal).toBe('SIGKILL');
  harness.spawnWorker();
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
  expect(run.status).toBe('completed');
  expect(harness.modelCalls()).toHaveLength(2);
  expect(run.usage).toMatchObject({ input_tokens: 300, output_tokens: 20, requests: 1 });
  expect(run.retry_waste).toMatchObject({ calls: 1, input_tokens: 300, output_tokens: 20 });
  expect(run.retry_waste.cost_usd).toBeCloseTo(0.0032, 10);
});

it('refused requests (a 503, then success) are not waste', async () => {
  harness = new Harness({
    script: { replies: [{ text: 'fine', fail: [{ kind: 'server_error', status: 503 }] }] },
  });
  await harness.startWorker();
  const { runId } = await harness.engine.startRun({ input: 'go' });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
  expect(run.status).toBe('completed');
  expect(run.retry_waste.calls).toBe(0);
});
