import { describe, expect, it } from 'vitest';
import { emptyContextView } from '../../../src/chat/index.js';
import { RatchetError } from '../../../src/errors/index.js';
import type { ModelCallInput } from '../../../src/workflows/core/effects/index.js';
import {
  planRequest,
  previousReplyOf,
  runStartOf,
} from '../../../src/workflows/steps/iteration/context-effects.js';

const now = '2026-11-24T00:00:00.000Z';
const user = (id: string, text: string) => ({
  id,
  sender: 'user',
  role: 'user' as const,
  parts: [{ type: 'text' as const, text }],
  metadata: {},
  created_at: now,
});

function input(effects: ModelCallInput['effects']): ModelCallInput {
  return {
    runId: 'run_a',
    iteration: 1,
    now,
    system: [],
    chat: [user('run_a-in', 'hello')],
    runStart: 0,
    view: emptyContextView,
    contextWindow: 1000,
    previous: undefined,
    effects,
  };
}

describe('planRequest', () => {
  it('a throwing effect fails the run at once with effect_failed and its message (not retried)', () => {
    const broken = [{ kind: 'no_such_kind', params: {} }] as unknown as ModelCallInput['effects'];
    let thrown: unknown;
    try {
      planRequest(input(broken));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RatchetError);
    expect((thrown as RatchetError).code).toBe('effect_failed');
    expect((thrown as RatchetError).retryable).toBe(false);
    expect((thrown as RatchetError).message).toContain('iteration 1');
  });

  it('plans the whole chat when no effect acts', () => {
    const plan = planRequest(input([]));
    expect(plan.kind).toBe('send');
    if (plan.kind === 'send') expect(plan.messages.map((message) => message.id)).toEqual(['run_a-in']);
  });
});

describe('what an iteration plans from', () => {
  it('the previous request: the recorded estimate and the provider input tokens of its reply', () => {
    const entry = {
      v: 1,
      index: 1,
      tool_calls: [],
      decision: 'tools',
      context: { tokens: 90, sent_estimate: 80, input_tokens: 120, applied: [], summary_up_to: null },
    };
    expect(previousReplyOf(JSON.stringify(entry), 'reply:1')).toEqual({
      previous: { input_tokens: 120, sent_estimate: 80 },
      afterPrevious: undefined,
    });
    // A reply recorded without effects (a member's answer, an older record): no previous request.
    expect(
      previousReplyOf(JSON.stringify({ ...entry, context: undefined }), 'reply:1').previous,
    ).toBeUndefined();
    expect(previousReplyOf(null, 'reply:0').previous).toBeUndefined();
    // What the effects decided after the previous reply: its waiting messages and a compaction asked for.
    const waiting = user('run_a-i1-after-note', 'after the results');
    const after = { decisions: [{ effect: 'note' }], pending: [waiting], compact: true };
    expect(previousReplyOf(JSON.stringify({ ...entry, after }), 'reply:1').afterPrevious).toEqual({
      messages: [waiting],
      compact: true,
    });
  });

  it("the run's start: its input message, or the chat's start", () => {
    const chat = [user('run_x-in', 'earlier run'), user('run_a-in', 'this run')];
    expect(runStartOf(chat, 'run_a')).toBe(1);
    expect(runStartOf(chat, 'run_b')).toBe(0);
  });
});
