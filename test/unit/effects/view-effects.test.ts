import { describe, expect, it } from 'vitest';
import { planModelCall } from '../../../src/workflows/core/effects/index.js';
import { conversation, planInput, shown } from './conversation.js';

const a = 'A'.repeat(100);
const b = 'B'.repeat(100);
const c = 'C'.repeat(100);

/** What the model gets from `chat` under the sliding window of the two tests below (a window of 200). */
const slidWindow = [
  'system: You are careful.',
  'user: [2 earlier messages are not shown, to keep the request within the context window]',
  'user: Find the bug.',
  'assistant: Now b. | → read_file({"path":"b.ts"})',
  `tool: ← BBBBB\n[… 95 more characters of this tool result left out]`,
  'assistant: → grep({"pattern":"x"})',
  `tool: ← ${c}`,
];
const chat = conversation('Find the bug.', [
  { tool: 'read_file', arguments: '{"path":"a.ts"}', result: a },
  { tool: 'read_file', arguments: '{"path":"b.ts"}', result: b, text: 'Now b.' },
  { tool: 'grep', arguments: '{"pattern":"x"}', result: c },
]);

const whole = [
  'system: You are careful.',
  'user: Find the bug.',
  'assistant: → read_file({"path":"a.ts"})',
  `tool: ← ${a}`,
  'assistant: Now b. | → read_file({"path":"b.ts"})',
  `tool: ← ${b}`,
  'assistant: → grep({"pattern":"x"})',
  `tool: ← ${c}`,
];

function sent(plan: ReturnType<typeof planModelCall>): string[] {
  if (plan.kind !== 'send') throw new Error(`expected a send plan, got ${plan.kind}`);
  return shown(plan.messages);
}

describe('the shrinking effects: what the model receives', () => {
  it('without effects: the system prompt and the whole chat', () => {
    expect(sent(planModelCall(planInput(chat)))).toEqual(whole);
  });

  it('trim_tool_results: older tool results cut to max_result_length, the newest preserve_recent whole', () => {
    const plan = planModelCall(
      planInput(chat, {
        effects: [{ kind: 'trim_tool_results', params: { max_result_length: 10, preserve_recent: 1 } }],
      }),
    );
    expect(sent(plan)).toEqual([
      'system: You are careful.',
      'user: Find the bug.',
      'assistant: → read_file({"path":"a.ts"})',
      `tool: ← ${'A'.repeat(10)}\n[… 90 more characters of this tool result left out]`,
      'assistant: Now b. | → read_file({"path":"b.ts"})',
      `tool: ← ${'B'.repeat(10)}\n[… 90 more characters of this tool result left out]`,
      'assistant: → grep({"pattern":"x"})',
      `tool: ← ${c}`,
    ]);
    // The chat itself is not changed.
    expect(shown(chat)).toEqual(whole.slice(1));
    expect(plan.kind === 'send' && plan.applied).toEqual(['trim_tool_results']);
  });

  it('trim_tool_results leaves results that fit, and keeps tool results paired with their calls', () => {
    const plan = planModelCall(
      planInput(chat, {
        effects: [{ kind: 'trim_tool_results', params: { max_result_length: 100, preserve_recent: 0 } }],
      }),
    );
    expect(sent(plan)).toEqual(whole);
    expect(plan.kind === 'send' && plan.applied).toEqual([]);
  });

  it('observation_mask: below its threshold nothing; at it, older results replaced by a note', () => {
    const effects = [{ kind: 'observation_mask' as const, params: { threshold: 0.5, recent_window: 1 } }];
    // The whole request is about 130 tokens (3 × 25 for the results, framing and the rest).
    expect(sent(planModelCall(planInput(chat, { contextWindow: 1000, effects })))).toEqual(whole);
    expect(sent(planModelCall(planInput(chat, { contextWindow: 200, effects })))).toEqual([
      'system: You are careful.',
      'user: Find the bug.',
      'assistant: → read_file({"path":"a.ts"})',
      'tool: ← [result of read_file hidden to save context: 100 characters]',
      'assistant: Now b. | → read_file({"path":"b.ts"})',
      'tool: ← [result of read_file hidden to save context: 100 characters]',
      'assistant: → grep({"pattern":"x"})',
      `tool: ← ${c}`,
    ]);
  });

  it('sliding_window: recent zone whole, medium zone cut, older messages left out but the task', () => {
    const effects = [
      {
        kind: 'sliding_window' as const,
        params: { threshold: 0.5, recent_zone: 2, medium_zone: 2, trim_length: 5 },
      },
    ];
    expect(sent(planModelCall(planInput(chat, { contextWindow: 10_000, effects })))).toEqual(whole);
    const plan = planModelCall(planInput(chat, { contextWindow: 200, effects }));
    expect(sent(plan)).toEqual(slidWindow);
  });

  it('sliding_window moves a zone border back rather than split a call from its result', () => {
    const effects = [
      {
        kind: 'sliding_window' as const,
        params: { threshold: 0.1, recent_zone: 1, medium_zone: 1, trim_length: 5 },
      },
    ];
    // The recent zone of 1 would start at the last tool result: it starts at its call instead, and the
    // medium zone of 1 likewise takes the previous call with its result.
    expect(sent(planModelCall(planInput(chat, { contextWindow: 200, effects })))).toEqual(slidWindow);
  });

  it('plans the same from the same input, and a plan survives JSON (it can be journaled)', () => {
    const input = planInput(chat, {
      contextWindow: 200,
      effects: [
        { kind: 'trim_tool_results', params: { max_result_length: 10, preserve_recent: 1 } },
        { kind: 'observation_mask', params: { threshold: 0.1, recent_window: 1 } },
      ],
    });
    const plan = planModelCall(input);
    expect(planModelCall(structuredClone(input))).toEqual(plan);
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });
});
