import { describe, expect, it } from 'vitest';
import { compareWithReference } from '../../src/testing/crash-differences.js';
import type { CrashTestReference } from '../../src/testing/index.js';
import type { RunTreeSnapshot } from '../../src/testing/run-snapshot.js';

const snapshot: RunTreeSnapshot = {
  status: 'completed',
  result: 'done',
  runs: {
    root: {
      status: 'completed',
      chat: [
        { id: 'root-in', text: 'go' },
        { id: 'root-i1-a', text: 'done' },
      ],
      events: ['{"kind":"run_completed"}', '{"kind":"run_started"}'],
    },
  },
  runCount: 1,
};
const reference: CrashTestReference = {
  snapshot,
  sideEffects: [{ key: 'charge', value: 42 }],
  modelCalls: 2,
  durationMs: 0,
};
const same = {
  crashAt: 'tool.mid_call',
  reference,
  snapshot,
  duplicates: [],
  sideEffects: [{ key: 'charge', value: 42 }],
  modelCalls: 3,
  allowedModelCalls: 3,
};

describe('compareWithReference', () => {
  it('finds nothing when the crashed run equals the reference, within the model calls a kill may cost', () => {
    expect(compareWithReference(same)).toEqual([]);
  });

  it('names the first message that differs, events lost or added, duplicates and extra model calls', () => {
    const root = snapshot.runs.root as RunTreeSnapshot['runs'][string];
    const differences = compareWithReference({
      ...same,
      snapshot: {
        ...snapshot,
        result: 'other',
        runs: {
          root: {
            ...root,
            chat: [
              { id: 'root-in', text: 'go' },
              { id: 'root-i1-a', text: 'other' },
            ],
            events: ['{"kind":"run_started"}', '{"kind":"run_started"}'],
          },
        },
      },
      duplicates: ['event 1-0 is stored twice'],
      sideEffects: [],
      modelCalls: 4,
      askedAgain: ['root iteration 1'],
    });
    expect(differences.map((difference) => [difference.kind, difference.detail])).toEqual([
      ['status', 'the run ended completed with "other"; without faults, completed with "done"'],
      [
        'transcript',
        'run root, message #1 (of 2 without faults, 2 after the crash): without faults {"id":"root-i1-a","text":"done"}; after the crash {"id":"root-i1-a","text":"other"}',
      ],
      [
        'events',
        'run root: 1 more than without faults: {"kind":"run_started"}; 1 missing: {"kind":"run_completed"}',
      ],
      ['duplicate', 'event 1-0 is stored twice'],
      ['side_effects', 'side effects in the ledger: 1 missing: {"key":"charge","value":42}'],
      [
        'model_calls',
        '4 model calls; without faults 2, and at most 3 allowed with the kill: a finished step asked the model again (asked more than once: root iteration 1)',
      ],
    ]);
    expect(differences.every((difference) => difference.crashAt === 'tool.mid_call')).toBe(true);
  });

  it('names runs of the tree that are missing or extra', () => {
    const differences = compareWithReference({
      ...same,
      snapshot: {
        ...snapshot,
        runs: { ...snapshot.runs, 'root/helper': { status: 'completed', chat: [], events: [] } },
        runCount: 2,
      },
    });
    expect(differences).toEqual([
      {
        crashAt: 'tool.mid_call',
        kind: 'runs',
        detail: 'runs ["root","root/helper"] (2 in the session); without faults ["root"] (1)',
      },
    ]);
  });
});
