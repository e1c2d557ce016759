import { describe, expect, it } from 'vitest';
import { sessionIdOfRun } from '../../src/workflows/ids.js';
import {
  decideFire,
  decodeFireDecision,
  encodeFireDecision,
  scheduledRunIds,
} from '../../src/workflows/index.js';

// The pure decision of a schedule's fire (decision 0036) and the ids its run gets.
const spec = { overlap: 'skip', catch_up: 'none', missed_after_s: 120 } as const;
const at = 1_700_000_000_000;
const situation = {
  spec,
  paused: false,
  fireAtMs: at,
  nowMs: at + 50,
  previous: undefined,
  queuedFireMs: undefined,
  runId: 'run_x',
};

describe('decideFire', () => {
  it('starts a run on time with no run in progress', () => {
    expect(decideFire(situation)).toEqual({ kind: 'run', runId: 'run_x' });
    expect(decideFire({ ...situation, previous: { runId: 'run_p', finished: true } })).toEqual({
      kind: 'run',
      runId: 'run_x',
    });
  });

  it('starts nothing while paused', () => {
    expect(decideFire({ ...situation, paused: true })).toEqual({ kind: 'skip', reason: 'paused' });
  });

  it('applies the overlap policy while the previous run is unfinished', () => {
    const busy = { ...situation, previous: { runId: 'run_p', finished: false } };
    expect(decideFire(busy)).toEqual({ kind: 'skip', reason: 'overlap' });
    expect(decideFire({ ...busy, spec: { ...spec, overlap: 'allow' } })).toEqual({
      kind: 'run',
      runId: 'run_x',
    });
    const queue = { ...busy, spec: { ...spec, overlap: 'queue' as const } };
    expect(decideFire(queue)).toEqual({ kind: 'wait' });
    expect(decideFire({ ...queue, queuedFireMs: at })).toEqual({ kind: 'wait' });
    expect(decideFire({ ...queue, queuedFireMs: at - 1000 })).toEqual({ kind: 'skip', reason: 'queue_full' });
    // The waiting fire starts once the previous run finished.
    expect(
      decideFire({
        ...queue,
        queuedFireMs: at,
        previous: { runId: 'run_p', finished: true },
        nowMs: at + 600_000,
      }),
    ).toEqual({ kind: 'run', runId: 'run_x' });
  });

  it('catches up a missed fire once, or skips it', () => {
    const late = { ...situation, nowMs: at + 121_000 };
    expect(decideFire(late)).toEqual({ kind: 'skip', reason: 'missed' });
    expect(decideFire({ ...late, spec: { ...spec, catch_up: 'once' } })).toEqual({
      kind: 'run',
      runId: 'run_x',
    });
    expect(decideFire({ ...situation, nowMs: at + 119_000 })).toEqual({ kind: 'run', runId: 'run_x' });
  });

  it('encodes each decision and reads it back', () => {
    for (const decision of [
      { kind: 'run', runId: 'run_a_b' },
      { kind: 'skip', reason: 'overlap' },
      { kind: 'skip', reason: 'missed' },
      { kind: 'wait' },
    ] as const) {
      expect(decodeFireDecision(encodeFireDecision(decision))).toEqual(decision);
    }
    expect(() => decodeFireDecision('skip:whatever')).toThrow('not a fire decision');
  });
});

describe('scheduledRunIds', () => {
  it('derives the same session and run from the same schedule and fire, and others from others', () => {
    const ids = scheduledRunIds('nightly', '2026-01-01T00:00:00.000Z', at);
    expect(ids).toEqual(scheduledRunIds('nightly', '2026-01-01T00:00:00.000Z', at));
    expect(sessionIdOfRun(ids.runId)).toBe(ids.sessionId);
    expect(scheduledRunIds('nightly', '2026-01-01T00:00:00.000Z', at + 1000).runId).not.toBe(ids.runId);
    // A schedule deleted and made again under the same id starts afresh.
    expect(scheduledRunIds('nightly', '2026-01-02T00:00:00.000Z', at).runId).not.toBe(ids.runId);
  });
});
