import { afterEach, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const loop: Script = {
  replies: [1, 2, 3, 4, 5, 6].map(() => ({
    tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
    usage: { input_tokens: 400, output_tokens: 100 },
  })),
};

it('an agent budget stops the run before the request that would exceed it', async () => {
  harness = new Harness({ script: loop, agent: { budget: { tokens: 1000 } } });
  await harness.startWorker();
  const { runId } = await harness.engine.startRun({ input: 'spend' });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
  expect(run.status).toBe('failed');
  expect(run.error?.code).toBe('budget_exceeded');
  expect(run.error?.message).toMatch(/the run has used 1000 tokens .* over the agent budget of 1000 tokens/);
  // Two requests were made (1000 tokens); the third, which would go over, was never sent.
  expect(harness.modelCalls()).toHaveLength(2);
});

it('a run budget in money works the same, with prices from the config', async () => {
  harness = new Harness({ script: loop, config: { pricing: { test: { input: 10, output: 10 } } } });
  await harness.startWorker();
  // Each request costs (400 + 100) × $10 / 1M = $0.005: the first fits (its estimate is small), the second not.
  const { runId } = await harness.engine.startRun({ input: 'spend', budget: { cost_usd: 0.004 } });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
  expect(run.status).toBe('failed');
  expect(run.error?.message).toMatch(/over the run budget of \$0\.004/);
  expect(run.cost_usd).toBeCloseTo(0.005, 10);
  expect(harness.modelCalls()).toHaveLength(1);
});

it('a budget that asks: the user raises it once, the run goes on, then stops it', async () => {
  harness = new Harness({ script: loop, agent: { budget: { tokens: 1000, on_exceeded: 'ask' } } });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'spend' });
  const budgetQuestion = async () => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const run = await harness?.engine.getRun(runId);
      if (run?.pending_question?.kind === 'budget') return run.pending_question;
      if (Date.now() > deadline) throw new Error(`no budget question (run ${run?.status})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const first = await budgetQuestion();
  expect(first.options).toEqual(['raise', 'stop']);
  expect(first.question).toMatch(/over the agent budget of 1000 tokens/);
  await harness.engine.respond(sessionId, first.id, 'raise');
  // Raised to 2000 tokens: two more requests, then the next question.
  const second = await budgetQuestion();
  expect(second.id).not.toBe(first.id);
  expect(second.question).toMatch(/over the agent budget of 2000 tokens/);
  expect(harness.modelCalls()).toHaveLength(4);
  await harness.engine.respond(sessionId, second.id, 'stop');
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
  expect(run.status).toBe('failed');
  expect(run.error?.code).toBe('budget_exceeded');
  expect(run.budget_raises).toBe(1);
});
