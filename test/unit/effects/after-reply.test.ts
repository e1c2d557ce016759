import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyContextView, type Message } from '../../../src/chat/index.js';
import { RatchetError } from '../../../src/errors/index.js';
import { type AfterReplyDecision, defineEffect } from '../../../src/index.js';
import { registerSecrets } from '../../../src/secrets/index.js';
import { type AfterReplyInput, decideAfterReply } from '../../../src/workflows/core/effects/after-reply.js';
import { planModelCall, type ResolvedEffect } from '../../../src/workflows/core/effects/index.js';
import { now, runId, userMessage } from './conversation.js';

// The after phase of effects (decision 0044), as pure code: what an effect may decide after a reply, where
// its message goes, and the guards on what it returns (an extension is code we run, its output is bounded).

const reply: Message = {
  id: `${runId}-i2-a`,
  sender: 'agent',
  role: 'assistant',
  parts: [{ type: 'text', text: 'done' }],
  metadata: {},
  created_at: now,
};

function effect(after: () => AfterReplyDecision, notify?: Parameters<typeof defineEffect>[0]['after']) {
  const definition = defineEffect({
    kind: 'after_test',
    options: z.strictObject({}),
    after: notify ?? (() => after()),
  });
  return { kind: 'after_test', params: {}, definition } satisfies ResolvedEffect;
}

function input(effects: ResolvedEffect[], overrides: Partial<AfterReplyInput> = {}): AfterReplyInput {
  return {
    runId,
    agent: 'agent',
    iteration: 2,
    now,
    reply,
    decision: 'final',
    chat: [userMessage(`${runId}-in`, 'task')],
    runStart: 0,
    tokens: 10,
    contextWindow: 1000,
    effects,
    canRemember: false,
    canAsk: true,
    ...overrides,
  };
}

const note = { role: 'user' as const, parts: [{ type: 'text' as const, text: 'remember the tests' }] };

describe('the after phase', () => {
  it('is absent for agents whose effects have none, and gives the context its inputs', () => {
    expect(decideAfterReply(input([]))).toBeUndefined();
    let seen: unknown;
    decideAfterReply(
      input([
        effect(
          () => undefined,
          (view, context) => {
            seen = { agent: context.agent, window: context.contextWindow, decision: view.decision };
            return undefined;
          },
        ),
      ]),
    );
    expect(seen).toEqual({ agent: 'agent', window: 1000, decision: 'final' });
  });

  it('puts a message right after a reply without tool calls, and after the results of one with calls', () => {
    const now_ = decideAfterReply(input([effect(() => ({ message: note, note: { why: 'x' } }))]));
    expect(now_?.messages.map((message) => message.id)).toEqual([`${runId}-i2-after-after_test`]);
    expect(now_?.messages[0]?.metadata).toMatchObject({ effect: 'after_test', after: true, iteration: 2 });
    expect(now_?.entry).toEqual({
      decisions: [{ effect: 'after_test', note: { why: 'x' }, message_id: `${runId}-i2-after-after_test` }],
      pending: [],
      compact: false,
    });
    const later = decideAfterReply(input([effect(() => ({ message: note }))], { decision: 'tools' }));
    expect(later?.messages).toEqual([]);
    expect(later?.entry.pending.map((message) => message.id)).toEqual([`${runId}-i2-after-after_test`]);
  });

  it("sends the waiting messages with the next request, once, and a requested compaction is the compact effect's", () => {
    const chat = Array.from({ length: 100 }, (_, index) => userMessage(`m${index}`, 'x'.repeat(400)));
    const waiting = {
      ...userMessage(`${runId}-i2-after-note`, 'after the results'),
      metadata: { after: true },
    };
    const base = {
      runId,
      iteration: 3,
      now,
      system: [],
      chat,
      runStart: 0,
      view: emptyContextView,
      contextWindow: 20_000,
      previous: undefined,
    };
    const compact: ResolvedEffect = { kind: 'compact', params: { threshold: 0.8 } };
    const sent = planModelCall({
      ...base,
      effects: [compact],
      afterPrevious: { messages: [waiting], compact: false },
    });
    expect(sent.kind === 'send' && sent.inject.map((message) => message.id)).toEqual([waiting.id]);
    // Once in the chat, not again.
    const again = planModelCall({
      ...base,
      chat: [...chat, waiting],
      effects: [],
      afterPrevious: { messages: [waiting], compact: false },
    });
    expect(again.kind === 'send' && again.inject).toEqual([]);
    // Below the threshold a compaction is made only when asked for.
    expect(sent.kind).toBe('send');
    const compacted = planModelCall({
      ...base,
      effects: [compact],
      afterPrevious: { messages: [], compact: true },
    });
    expect(compacted.kind).toBe('compact');
  });

  const hostile: [string, () => AfterReplyDecision, RegExp][] = [
    ['a system message', () => ({ message: { ...note, role: 'system' as 'user' } }), /role "system"/],
    [
      'a tool call',
      () => ({
        message: { role: 'user', parts: [{ type: 'tool_call', id: 'c', name: 'rm', arguments: '{}' }] },
      }),
      /parts other than text/,
    ],
    [
      'a message over the bound',
      () => ({ message: { role: 'user', parts: [{ type: 'text', text: 'x'.repeat(16_001) }] } }),
      /16001 characters \(at most 16000\)/,
    ],
    ['a note over the bound', () => ({ note: 'x'.repeat(5_000) }), /at most 4000 characters/],
    ['a note to remember without a memory', () => ({ remember: { name: 'n', content: 'c' } }), /no memory/],
    ['a note name with a path', () => ({ remember: { name: '../x', content: 'c' } }), /letters, digits/],
  ];
  it.each(hostile)(
    'fails the step with effect_failed, naming the effect, on %s',
    (_label, after, message) => {
      const run = () => decideAfterReply(input([effect(after)]));
      expect(run).toThrow(RatchetError);
      expect(run).toThrow(message);
      expect(run).toThrow(/the effect "after_test"/);
    },
  );

  it('refuses events outside the vocabulary, too many, or whose data does not fit', () => {
    const emitting = (events: unknown[]) =>
      effect(
        () => undefined,
        (_view, context) => {
          for (const event of events) context.notify(event as never);
          return undefined;
        },
      );
    expect(() => decideAfterReply(input([emitting([{ kind: 'run_completed', data: {} }])]))).toThrow(
      /kind "run_completed"/,
    );
    const progress = { kind: 'progress', data: { fraction: null, message: 'ok' } };
    expect(() => decideAfterReply(input([emitting(Array(11).fill(progress))]))).toThrow(/11 events/);
    expect(() => decideAfterReply(input([emitting([{ kind: 'progress', data: { nope: 1 } }])]))).toThrow(
      /does not fit/,
    );
    const fine = decideAfterReply(input([emitting([progress])]));
    expect(fine?.events).toEqual([progress]);
    expect(fine?.entry.decisions).toEqual([{ effect: 'after_test', events: ['progress'] }]);
  });

  it('records one question a reply, bounded as ask_user and redacted, and none when the run cannot go on', () => {
    const asking = (...questions: unknown[]) =>
      effect(
        () => undefined,
        (_view, context) => {
          for (const question of questions) context.ask(question as never);
          return undefined;
        },
      );
    const asked = decideAfterReply(input([asking({ question: 'Ship it?', options: ['yes', 'no'] })]));
    expect(asked?.entry.ask).toEqual({ effect: 'after_test', question: 'Ship it?', options: ['yes', 'no'] });
    expect(asked?.entry.decisions).toEqual([{ effect: 'after_test', asked: true }]);
    // After a failure, or an answer at the last iteration, the run ends: nothing is asked or recorded.
    const ending = decideAfterReply(input([asking({ question: 'Ship it?' })], { canAsk: false }));
    expect(ending?.entry.ask).toBeUndefined();
    expect(ending?.entry.decisions).toEqual([]);
    // An attacker's text (an effect may quote the reply): each bound named, with the field.
    expect(() => decideAfterReply(input([asking({ question: 'x'.repeat(4_001) })]))).toThrow(
      /"after_test" asked a question that does not fit: question: .*4001.*4000/,
    );
    expect(() =>
      decideAfterReply(input([asking({ question: 'pick', options: Array(21).fill('a') })])),
    ).toThrow(/options: 21 options, more than the 20/);
    expect(() => decideAfterReply(input([asking({ question: 'pick', options: ['y'.repeat(201)] })]))).toThrow(
      /options\[0\]/,
    );
    expect(() => decideAfterReply(input([asking({ question: '  ' })]))).toThrow(/without text/);
    expect(() => decideAfterReply(input([asking({ question: 'a' }, { question: 'b' })]))).toThrow(
      /second question/,
    );
    // A secret the process knows is hidden from the question and its options, as from model output.
    registerSecrets(['sk-after-phase-secret-0123456789']);
    const leaky = decideAfterReply(
      input([
        asking({
          question: 'Use key sk-after-phase-secret-0123456789?',
          options: ['sk-after-phase-secret-0123456789'],
        }),
      ]),
    );
    expect(leaky?.entry.ask).toMatchObject({ question: 'Use key [redacted]?', options: ['[redacted]'] });
    // Two effects asking after one reply: the second is refused too.
    expect(() =>
      decideAfterReply(input([asking({ question: 'a' }), { ...asking({ question: 'b' }), kind: 'other' }])),
    ).toThrow(/second question/);
  });
});
