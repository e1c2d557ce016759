import { describe, expect, it } from 'vitest';
import { contextViewSchema, type Message } from '../../../src/chat/index.js';
import {
  applySummary,
  buildSummaryRequest,
  planAfterContextError,
  planModelCall,
  type ResolvedEffect,
  summaryBound,
} from '../../../src/workflows/core/effects/index.js';
import { conversation, now, planInput, runId, shown, systemPrompt } from './conversation.js';

const compact: ResolvedEffect = { kind: 'compact', params: { threshold: 0.8 } };
const turns = Array.from({ length: 10 }, (_, index) => ({
  tool: 'read_file',
  arguments: `{"path":"f${index + 1}"}`,
  result: `${index + 1}`.padEnd(400, '.'),
}));
// Estimates: system 8, task 9, each call 10 and each result 104 tokens: 1157 in all, over 0.8 × 1000.
// After the summary: system 8, the summary message 39, the last call and result 114: 161.
const chat = conversation('Do the long task.', turns);
const input = planInput(chat, { contextWindow: 1000, effects: [compact] });

describe('compact', () => {
  it('below the threshold, sends the whole chat', () => {
    const plan = planModelCall({ ...input, contextWindow: 2000 });
    expect(plan.kind).toBe('send');
    expect(plan.kind === 'send' && plan.messages.length).toBe(chat.length + 1);
  });

  it('at the threshold, asks for a summary of all but the entries that fit a quarter of the threshold', () => {
    // The last call (10) and its result (104) fit 200 tokens; with the result before, they would not.
    expect(planModelCall(input)).toEqual({ kind: 'compact', reason: 'threshold', up_to: 19, tokens: 1157 });
  });

  it('builds the summary request as a plain transcript, cut evenly to fit half the window', () => {
    const request = buildSummaryRequest({
      runId,
      chat,
      view: input.view,
      upTo: 19,
      contextWindow: 1000,
      now,
    });
    expect(request.maxTokens).toBe(256);
    expect(request.messages.map((message) => [message.id, message.role])).toEqual([
      [`${runId}-compact-19-system`, 'system'],
      [`${runId}-compact-19-input`, 'user'],
    ]);
    const transcript =
      request.messages[1]?.parts[0]?.type === 'text' ? request.messages[1].parts[0].text : '';
    expect(transcript).toContain(
      'The conversation entries to summarise:\n\n[0] user (user): Do the long task.',
    );
    expect(transcript).toContain('[1] assistant (agent): calls read_file({"path":"f1"}) [call_1]');
    expect(transcript).toContain(`[2] tool (read_file): ${'result for [call_1]: 1'.padEnd(210, '.')}\n[… `);
    expect(transcript).toContain('[18] tool (read_file): result for [call_9]: 9');
    expect(transcript).not.toContain('[19]');
    expect(transcript.length).toBeLessThan(4000 + 500);
  });

  it('after the summary, the model receives the system prompt, the summary and the recent entries', () => {
    const outcome = applySummary({
      runId,
      iteration: 11,
      system: [systemPrompt],
      chat,
      view: input.view,
      upTo: 19,
      summaryText: '  Read f1 to f9; nothing wrong yet.  ',
      tokensBefore: 1157,
      reason: 'threshold',
      previous: undefined,
      contextWindow: input.contextWindow,
      now,
    });
    if (outcome.kind !== 'summary') throw new Error('expected a summary');
    const { view, event } = outcome;
    expect(contextViewSchema.parse(view)).toEqual({
      v: 1,
      summary: { text: 'Read f1 to f9; nothing wrong yet.', up_to: 19, created_at: now },
    });
    const plan = planModelCall({ ...input, view });
    expect(plan.kind === 'send' && shown(plan.messages)).toEqual([
      'system: You are careful.',
      'user: Summary of the conversation so far (earlier messages were summarised to stay within the ' +
        'context window):\n\nRead f1 to f9; nothing wrong yet.',
      'assistant: → read_file({"path":"f10"})',
      `tool: ← ${'10'.padEnd(400, '.')}`,
    ]);
    expect(plan.kind === 'send' && plan.tokens).toBe(event.data.tokens_after);
    expect(event).toEqual({
      kind: 'compaction',
      data: { iteration: 11, up_to: 19, tokens_before: 1157, tokens_after: 161, reason: 'threshold' },
    });
    // The chat, the transcript a user reads, keeps every entry.
    expect(chat).toHaveLength(21);
  });

  it('summarises everything when even the last result alone is over the recent budget', () => {
    const big = conversation('Do it.', [{ tool: 'fetch', result: 'x'.repeat(4000) }]);
    expect(planModelCall(planInput(big, { contextWindow: 1000, effects: [compact] }))).toMatchObject({
      kind: 'compact',
      up_to: 3,
    });
  });

  it('sends as it is a request over the threshold only because of what it cannot summarise', () => {
    const short = conversation('Do it.', []);
    const plan = planModelCall(
      planInput(short, {
        contextWindow: 1000,
        effects: [compact],
        // The provider counted 890 tokens more than the estimate of what was sent (tool definitions ...).
        previous: { input_tokens: 900, sent_estimate: 10 },
      }),
    );
    expect(plan).toMatchObject({ kind: 'send', tokens: 904 });
  });

  it('refuses an empty summary of a request that does not fit (a bad reply, retried), never a view that forgets the conversation', () => {
    expect(() =>
      applySummary({
        runId,
        iteration: 11,
        system: [],
        chat,
        view: input.view,
        upTo: 19,
        summaryText: ' \n ',
        tokensBefore: 1,
        reason: 'context_length_error',
        previous: undefined,
        contextWindow: input.contextWindow,
        now,
      }),
    ).toThrow(expect.objectContaining({ code: 'model_bad_response', retryable: true }));
  });
});

describe('reactive compaction after a context-length error', () => {
  const injected: Message = {
    id: `${runId}-i11-e-progress`,
    sender: 'ratchet',
    role: 'user',
    parts: [{ type: 'text', text: 'Progress checkpoint' }],
    metadata: { effect: 'progress', iteration: 11 },
    created_at: now,
  };

  it('summarises everything not yet summarised except what effects added for this iteration', () => {
    const withInjected = [...chat, injected];
    expect(
      planAfterContextError({ ...input, chat: withInjected, iteration: 11, contextWindow: 100_000 }),
    ).toEqual({
      kind: 'compact',
      reason: 'context_length_error',
      up_to: 21,
      tokens: 1157 + 9,
    });
  });

  it('fails with context_exceeded when everything is summarised already, or the agent does not compact', () => {
    const view = { v: 1 as const, summary: { text: 'All of it.', up_to: 21, created_at: now } };
    expect(planAfterContextError({ ...input, view })).toMatchObject({
      kind: 'fail',
      code: 'context_exceeded',
      message: expect.stringContaining('even after compacting everything before it'),
    });
    expect(planAfterContextError({ ...input, effects: [] })).toMatchObject({
      kind: 'fail',
      code: 'context_exceeded',
      message: expect.stringContaining('add a `compact` effect'),
    });
  });

  it('cuts a summary longer than a quarter of the window to its bound, with a note', () => {
    const outcome = applySummary({
      runId,
      iteration: 11,
      system: [systemPrompt],
      chat,
      view: input.view,
      upTo: 19,
      summaryText: `Read f1 to f9. ${'Then more. '.repeat(100_000)}`,
      tokensBefore: 1157,
      reason: 'threshold',
      previous: undefined,
      contextWindow: 8000,
      now,
    });
    expect(summaryBound(8000)).toBe(8000);
    const text = outcome.kind === 'summary' ? (outcome.view.summary?.text ?? '') : '';
    expect(text.length).toBeLessThanOrEqual(8000);
    expect(text.startsWith('Read f1 to f9. ')).toBe(true);
    expect(text).toMatch(/\[… \d+ more characters of this summary left out\]$/);
  });

  it('sends a stored summary over its bound back cut in the next summary request', () => {
    const view = {
      v: 1 as const,
      summary: { text: 'x'.repeat(3_000_000), up_to: 3, created_at: now },
    };
    const request = buildSummaryRequest({ runId, chat, view, upTo: 19, contextWindow: 1000, now });
    const sent = request.messages.map((message) => JSON.stringify(message)).join('');
    expect(sent.length).toBeLessThan(summaryBound(1000) + 4000 * 2);
  });

  it('declines the compaction on an empty summary of a request that still fits, and the plan then sends', () => {
    const outcome = applySummary({
      runId,
      iteration: 11,
      system: [systemPrompt],
      chat,
      view: input.view,
      upTo: 19,
      summaryText: '',
      tokensBefore: 900,
      reason: 'threshold',
      previous: undefined,
      contextWindow: 1000,
      now,
    });
    expect(outcome).toEqual({
      kind: 'declined',
      view: { v: 1, summary: null, declined: { run_id: runId, iteration: 11, up_to: 19 } },
    });
    expect(contextViewSchema.parse(outcome.view)).toEqual(outcome.view);
    // The same iteration plans from the recorded decision: it sends; the next one would compact again.
    const planned = planInput(chat, { contextWindow: 1000, effects: [compact] });
    expect(planModelCall({ ...planned, view: outcome.view, iteration: 11 }).kind).toBe('send');
    expect(planModelCall({ ...planned, view: outcome.view, iteration: 12 }).kind).toBe('compact');
  });
});
