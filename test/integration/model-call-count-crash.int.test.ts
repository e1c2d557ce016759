import { afterAll, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { journalField } from '../../src/workflows/journal.js';
import { crashAndTakeOver, expectSameAsReference, referenceRun } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// Decision 0054: an iteration's load script counts the model call the execution is about to make
// (`calls:<n>`), in place of a command of its own beside the request; an execution that ends without the
// call gives the count back. These pin what a later execution then learns, at the crash points between the
// count and the reply's commit, and on a path that parks before calling.
const script: Script = {
  replies: [
    { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
    { text: 'the sum is 5' },
  ],
};

const harnesses: Harness[] = [];
afterAll(async () => {
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
});

async function callsCounted(harness: Harness, sessionId: string, runId: string, n: number) {
  const journal = runKeys(harness.engine.space, sessionId, runId).journal;
  return Number((await harness.redis.hget(journal, journalField.modelCalls(n))) ?? 0);
}

/** A run killed at `point` and finished on another worker, equal to the reference run without faults. */
async function killedAt(point: string) {
  const reference = await referenceRun(script, 'add 2 and 3');
  const outcome = await crashAndTakeOver(script, 'add 2 and 3', point, (harness) => harnesses.push(harness));
  await expectSameAsReference(outcome, reference);
  return { ...outcome, referenceCalls: reference.modelCalls };
}

describe("the model call count made by an iteration's load", () => {
  it('counts one call per iteration, and no retry waste, on a run without faults', async () => {
    const harness = new Harness({ script });
    harnesses.push(harness);
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add 2 and 3' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(harness.modelCalls()).toHaveLength(2);
    expect(await callsCounted(harness, sessionId, runId, 1)).toBe(1);
    expect(await callsCounted(harness, sessionId, runId, 2)).toBe(1);
    expect((await harness.engine.getRun(runId))?.retry_waste.calls).toBe(0);
  });

  it('is the repeated call a takeover records as waste, after a kill mid model call', async () => {
    const { harness, sessionId, runId, referenceCalls } = await killedAt('iteration.after_model_call');
    // The model was asked twice for iteration 1: both calls are counted, the dead one is waste.
    expect(harness.modelCalls()).toHaveLength(referenceCalls + 1);
    expect(await callsCounted(harness, sessionId, runId, 1)).toBe(2);
    expect((await harness.engine.getRun(runId))?.retry_waste.calls).toBe(1);
  });

  it('overstates by the one execution that died between its load and its request, never more', async () => {
    const { harness, sessionId, runId, referenceCalls } = await killedAt('iteration.before_model_call');
    // No call was repeated: the dead execution was counted by its load and never sent its request, the case
    // a count sent beside the request already had (a kill between the count and the request).
    expect(harness.modelCalls()).toHaveLength(referenceCalls);
    expect(await callsCounted(harness, sessionId, runId, 1)).toBe(2);
    expect((await harness.engine.getRun(runId))?.retry_waste.calls).toBe(1);
  });

  it('is given back by an execution that parks before calling (a provider rate limit)', async () => {
    const harness = new Harness({ script, provider: { rate_limit: { rpm: 1, window_ms: 300 } } });
    harnesses.push(harness);
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add 2 and 3' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(harness.modelCalls()).toHaveLength(2);
    const journal = runKeys(harness.engine.space, sessionId, runId).journal;
    // Iteration 2 was parked by the limit at least once (its attempts record notes the wake), and only the
    // execution that called is counted.
    const attempts = JSON.parse(
      (await harness.redis.hget(journal, journalField.attempts(`${runId}-i2`))) ?? '{}',
    );
    expect(attempts.attempts.map((note: { cause: string }) => note.cause)).toContain('wake');
    expect(await callsCounted(harness, sessionId, runId, 2)).toBe(1);
    expect((await harness.engine.getRun(runId))?.retry_waste.calls).toBe(0);
  });
});
