import { describe, expect, it } from 'vitest';
import { decideToolStart, outcomeUnknownMessage } from '../../src/workflows/core/tool-ledger.js';
import type { ToolIntent, ToolOutcomeEntry } from '../../src/workflows/journal.js';

const intent: ToolIntent = {
  v: 1,
  token: 'token-a',
  idempotency_key: 'run_x-i1-t0',
  at: '2024-05-01T12:00:00.000Z',
};
const outcome: ToolOutcomeEntry = { v: 1, is_error: false, at: '2024-05-01T12:00:01.000Z' };

describe('decideToolStart', () => {
  it('a recorded outcome is reused, whatever the intent and policy', () => {
    expect(decideToolStart(intent, outcome, 'outcome_unknown', 'token-b')).toEqual({
      kind: 'reuse',
      outcome,
    });
    expect(decideToolStart(undefined, outcome, 'rerun', 'token-b')).toEqual({ kind: 'reuse', outcome });
  });

  it('no intent: the call never started and runs', () => {
    expect(decideToolStart(undefined, undefined, 'outcome_unknown', 'token-a')).toEqual({ kind: 'run' });
    expect(decideToolStart(undefined, undefined, 'rerun', 'token-a')).toEqual({ kind: 'run' });
  });

  it('an intent of another attempt of an idempotent tool: rerun with the recorded intent', () => {
    expect(decideToolStart(intent, undefined, 'rerun', 'token-b')).toEqual({ kind: 'rerun', intent });
  });

  it('an intent of another attempt of a non-idempotent tool: outcome unknown', () => {
    expect(decideToolStart(intent, undefined, 'outcome_unknown', 'token-b')).toEqual({
      kind: 'outcome_unknown',
      intent,
    });
  });

  it('an intent recorded by this same attempt (same token) is not an interruption: rerun', () => {
    expect(decideToolStart(intent, undefined, 'outcome_unknown', 'token-a')).toEqual({
      kind: 'rerun',
      intent,
    });
  });

  it('the outcome-unknown message names the tool and says it may have taken effect', () => {
    const message = outcomeUnknownMessage('send_email');
    expect(message).toContain('"send_email"');
    expect(message).toContain('may or may not have taken effect');
  });
});
