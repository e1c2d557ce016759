import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { crashPointNames } from '../../src/workflows/crash-points.js';
import {
  crashAndTakeOver,
  expectSameAsReference,
  type Reference,
  referenceRun,
  type ScenarioOptions,
} from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';

// SIGKILL around a compaction (before the summary call, after it, before and after its commit): a fresh
// worker finishes the run exactly as a run without faults ends — same transcript, same events (one
// `compaction` event per compaction, never two) — and the summary is asked for at most once more per kill.
const script: Script = {
  replies: [
    ...Array.from({ length: 5 }, (_, index) => ({
      text: `step ${index}`,
      tool_calls: [{ name: 'big_result', arguments: { label: `r${index}`, size: 1000 } }],
    })),
    { text: 'finished' },
  ],
  summary: { text: 'SUMMARY: the results so far' },
};
const options: ScenarioOptions = {
  provider: { context_window: 4000 },
  agent: { effects: [{ kind: 'compact', params: { threshold: 0.5 } }] },
};

const summaryPoints = crashPointNames.filter((point) => point.includes('_summary_'));

let reference: Reference;
let referenceSummaries = 0;
const harnesses: Harness[] = [];

beforeAll(async () => {
  reference = await referenceRun(script, 'compact me', options);
  referenceSummaries = reference.events.filter((event) => event.includes('"kind":"compaction"')).length;
  expect(referenceSummaries).toBeGreaterThan(0);
});

afterAll(async () => {
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
});

describe('SIGKILL around a compaction, then a fresh worker takes over', () => {
  it.each(summaryPoints.map((point) => [point]))('%s', async (point) => {
    const outcome = await crashAndTakeOver(
      script,
      'compact me',
      point,
      (harness) => harnesses.push(harness),
      options,
    );
    await expectSameAsReference(outcome, reference);
    const summaries = outcome.harness.modelCalls().filter((call) => call.purpose === 'summary');
    expect(summaries.length).toBeGreaterThanOrEqual(referenceSummaries);
    expect(summaries.length).toBeLessThanOrEqual(referenceSummaries + outcome.kills);
    // After its commit, a summary is never asked for again.
    if (point === 'iteration.after_summary_commit') expect(summaries.length).toBe(referenceSummaries);
  });
});

// The messages loop_detect and progress add, and their events, go into the chat with the reply: a crash
// before that commit leaves nothing, and the iteration that runs again plans the same request (from the
// same chat, view and recorded numbers) and adds the same messages once.
const loopScript: Script = {
  replies: [
    ...Array.from({ length: 4 }, () => ({ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] })),
    { text: 'stopped repeating' },
  ],
};
const loopOptions: ScenarioOptions = {
  agent: {
    effects: [
      { kind: 'loop_detect', params: { threshold: 3, window_size: 6 } },
      { kind: 'progress', params: { interval: 2 } },
    ],
  },
};

describe('SIGKILL in the iteration whose request carries an effect message', () => {
  let loopReference: Reference;
  beforeAll(async () => {
    loopReference = await referenceRun(loopScript, 'add again', loopOptions);
    expect(loopReference.events.filter((event) => event.includes('"kind":"loop_detected"'))).toHaveLength(1);
  });

  // The 4th iteration's request is the first with the loop warning (and the progress checkpoint of 3 is
  // in the chat before it).
  it.each(['iteration.before_model_call@4', 'iteration.after_model_call@4', 'iteration.after_commit@4'])(
    '%s',
    async (point) => {
      const outcome = await crashAndTakeOver(
        loopScript,
        'add again',
        point,
        (harness) => harnesses.push(harness),
        loopOptions,
      );
      await expectSameAsReference(outcome, loopReference);
    },
  );
});
