import { describe, expect, it } from 'vitest';
import type { Message, Part, ToolCallPart } from '../../src/chat/index.js';
import { messageSchema } from '../../src/chat/index.js';
import { runEndKinds, storedEventSchema } from '../../src/events/event.js';
import { decideReply } from '../../src/workflows/core/reply-decision.js';
import {
  cancelCommit,
  completionCommit,
  failureCommit,
  messageAddedEvent,
  replyCommit,
  resultsCommit,
  toolEndEvent,
  toolResultMessage,
  toolStartEvent,
} from '../../src/workflows/core/run-commits.js';
import { messageId } from '../../src/workflows/ids.js';
import { replyEntrySchema, resultsEntrySchema } from '../../src/workflows/journal.js';
import { type RunRecord, runRecordSchema } from '../../src/workflows/run-record.js';

const runId = 'run_0123456789abcdef_abcdefghjk';
const created = '2024-05-01T12:00:00.000Z';
const now = '2024-05-01T12:00:05.000Z';

function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    v: 1,
    id: runId,
    session_id: 'ses_0123456789abcdef',
    agent: 'researcher',
    chat_id: 'main',
    status: 'running',
    iteration: 1,
    usage: { input_tokens: 100, output_tokens: 10, cached_input_tokens: 5, requests: 1 },
    cost_usd: 0.5,
    retry_waste: { calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    budget: null,
    parent: null,
    lineage: [],
    root_run_id: null,
    prefix: '🤖',
    budget_raises: 0,
    guardrail_retries: 0,
    deadline_at: null,
    max_iterations: null,
    tool_calls: { count: 0, names: [] },
    sub_goals: null,
    orchestration_steps: 0,
    partial: null,
    partial_results: {},
    confidence: null,
    contract: null,
    schema_version: null,
    origin: null,
    retried_by: null,
    input_line: null,
    definition: null,
    tenant: 'default',
    priority: 5,
    result: null,
    error: null,
    created_at: created,
    updated_at: created,
    started_at: created,
    finished_at: null,
    ...overrides,
  };
}

const usage = { input_tokens: 50, output_tokens: 7, cached_input_tokens: 20, requests: 2 };
const summedUsage = { input_tokens: 150, output_tokens: 17, cached_input_tokens: 25, requests: 3 };

function callPart(id: string, name: string): ToolCallPart {
  return { type: 'tool_call', id, name, arguments: '{}' };
}

function reply(parts: Part[], iteration: number, maxIterations = 10, run = runRecord()) {
  return replyCommit({
    run,
    iteration,
    parts,
    usage,
    costUsd: 0.25,
    wastedCalls: 0,
    decision: decideReply(parts, iteration, maxIterations),
    chatLength: 4,
    now,
  });
}

function expectValid(plan: { record: RunRecord | undefined; messages: unknown[]; events: unknown[] }) {
  if (plan.record) runRecordSchema.parse(plan.record);
  for (const message of plan.messages) messageSchema.parse(message);
  for (const event of plan.events) storedEventSchema.parse(event);
}

describe('replyCommit', () => {
  it('a final reply completes the run with its result, summed usage and finished_at', () => {
    const plan = reply([{ type: 'text', text: 'The answer is 42.' }], 2);
    expectValid(plan);
    expect(plan.record).toEqual({
      ...runRecord(),
      status: 'completed',
      iteration: 2,
      usage: summedUsage,
      cost_usd: 0.75,
      result: 'The answer is 42.',
      updated_at: now,
      finished_at: now,
    });
    expect(plan.finished).toBe(true);
    expect(plan.events.map((event) => event.kind)).toEqual(['message_added', 'agent_end', 'run_completed']);
    expect(plan.events[2]).toEqual({
      v: 1,
      kind: 'run_completed',
      run_id: runId,
      agent: 'researcher',
      time: now,
      data: { result: 'The answer is 42.', usage: summedUsage, iterations: 2 },
    });
    expect(plan.journal).toEqual({ v: 2, index: 4, tool_calls: [], decision: 'final' });
  });

  it('appends the assistant message with a deterministic id at index chatLength', () => {
    const parts: Part[] = [{ type: 'text', text: 'hi' }];
    const plan = reply(parts, 3);
    expect(plan.messages).toEqual([
      {
        id: messageId.reply(runId, 3),
        sender: 'researcher',
        role: 'assistant',
        parts,
        metadata: { iteration: 3, usage, cost_usd: 0.25 },
        created_at: now,
      },
    ]);
    expect(reply(parts, 3).messages[0]?.id).toBe(plan.messages[0]?.id);
    expect(reply(parts, 4).messages[0]?.id).not.toBe(plan.messages[0]?.id);
    expect(plan.events[0]).toEqual({
      v: 1,
      kind: 'message_added',
      run_id: runId,
      agent: 'researcher',
      time: now,
      data: { chat_id: 'main', index: 4, message: plan.messages[0] },
    });
  });

  it('a reply asking for tools keeps the run running and journals the calls', () => {
    const parts: Part[] = [
      { type: 'text', text: 'checking' },
      callPart('c1', 'search'),
      callPart('c2', 'fetch'),
    ];
    const plan = reply(parts, 2);
    expectValid(plan);
    expect(plan.finished).toBe(false);
    expect(plan.record?.status).toBe('running');
    expect(plan.record?.iteration).toBe(2);
    expect(plan.record?.usage).toEqual(summedUsage);
    expect(plan.record?.finished_at).toBeNull();
    expect(plan.record?.result).toBeNull();
    expect(plan.events.map((event) => event.kind)).toEqual(['message_added']);
    expect(replyEntrySchema.parse(plan.journal)).toEqual({
      v: 2,
      index: 4,
      tool_calls: [
        { id: 'c1', name: 'search' },
        { id: 'c2', name: 'fetch' },
      ],
      decision: 'tools',
    });
  });

  it('tools asked at max_iterations fail the run with the error recorded', () => {
    const plan = reply([callPart('c1', 'search')], 3, 3);
    expectValid(plan);
    expect(plan.finished).toBe(true);
    expect(plan.record?.status).toBe('failed');
    expect(plan.record?.finished_at).toBe(now);
    expect(plan.record?.result).toBeNull();
    expect(plan.record?.error?.code).toBe('max_iterations');
    expect(plan.record?.error?.message).toContain('max_iterations (3)');
    expect(plan.events.map((event) => event.kind)).toEqual(['message_added', 'agent_end', 'run_failed']);
    expect(plan.events[2]?.data).toEqual({ error: plan.record?.error, usage: summedUsage, iterations: 3 });
    expect(plan.journal.decision).toBe('failed');
    expect(plan.journal.tool_calls).toEqual([]);
  });

  it('sets started_at on the first reply of a run that had none, and keeps an existing one', () => {
    const fresh = reply(
      [{ type: 'text', text: 'x' }],
      1,
      10,
      runRecord({ started_at: null, status: 'queued' }),
    );
    expect(fresh.record?.started_at).toBe(now);
    expect(reply([{ type: 'text', text: 'x' }], 1).record?.started_at).toBe(created);
  });

  it('does not change the run it was given', () => {
    const run = runRecord();
    reply([{ type: 'text', text: 'x' }], 2, 10, run);
    expect(run).toEqual(runRecord());
  });
});

describe('toolResultMessage and resultsCommit', () => {
  const calls = [
    { id: 'c1', name: 'search', content: 'found', isError: false },
    { id: 'c2', name: 'fetch', content: 'timeout', isError: true },
    { id: 'c3', name: 'search', content: 'unknown', isError: true },
  ];
  const messages = calls.map((call, index) =>
    toolResultMessage({
      runId,
      iteration: 2,
      index,
      call,
      content: call.content,
      isError: call.isError,
      now,
    }),
  );

  it('makes one tool message per call with its tool_call_id and a deterministic id', () => {
    expect(messages).toEqual(
      calls.map((call, index) => ({
        id: messageId.toolResult(runId, 2, index),
        sender: call.name,
        role: 'tool',
        parts: [
          { type: 'tool_result', tool_call_id: call.id, content: call.content, is_error: call.isError },
        ],
        metadata: { iteration: 2 },
        created_at: now,
      })),
    );
    expect(new Set(messages.map((message) => message.id)).size).toBe(3);
  });

  it('appends the messages in the order given and announces each at index chatLength + k', () => {
    const plan = resultsCommit({ run: runRecord(), messages, chatLength: 6, now });
    expectValid(plan);
    expect(plan.record).toBeUndefined();
    expect(plan.finished).toBe(false);
    expect(plan.messages).toEqual(messages);
    expect(
      plan.events.map((event) => [event.kind, event.kind === 'message_added' ? event.data.index : -1]),
    ).toEqual([
      ['message_added', 6],
      ['message_added', 7],
      ['message_added', 8],
    ]);
    expect(plan.events.map((event) => (event.kind === 'message_added' ? event.data.message : null))).toEqual(
      messages,
    );
    expect(resultsEntrySchema.parse(plan.journal)).toEqual({ v: 1, index: 6, count: 3 });
  });

  it("messageAddedEvent names the run's chat and the position", () => {
    const event = messageAddedEvent(runRecord(), messages[0] as Message, 4, now);
    storedEventSchema.parse(event);
    expect(event.data).toEqual({ chat_id: 'main', index: 4, message: messages[0] });
  });
});

describe('failureCommit', () => {
  it('fails the run with the error, keeping its usage and iteration', () => {
    const run = runRecord({ iteration: 3 });
    const error = { code: 'model_auth_failed', message: 'invalid API key' };
    const plan = failureCommit(run, error, now);
    expectValid(plan);
    expect(plan.record).toEqual({ ...run, status: 'failed', error, updated_at: now, finished_at: now });
    expect(plan.finished).toBe(true);
    expect(plan.messages).toEqual([]);
    expect(plan.events).toEqual([
      {
        v: 1,
        kind: 'agent_end',
        run_id: runId,
        agent: 'researcher',
        time: now,
        data: {
          status: 'failed',
          parent_run_id: null,
          depth: 0,
          prefix: '🤖',
          duration_ms: 5000,
          // The run as it ends: its iterations, tokens and cost so far, and how long it took.
          metadata: {
            execution_time_ms: 5000,
            iterations: 3,
            tool_calls: { count: 0, names: [] },
            tokens: { input: 100, output: 10, total: 110 },
            cost_usd: 0.5,
            confidence: null,
            partial: null,
            partial_results: {},
            contract: null,
            schema_version: null,
          },
        },
      },
      {
        v: 1,
        kind: 'run_failed',
        run_id: runId,
        agent: 'researcher',
        time: now,
        data: { error, usage: run.usage, iterations: 3 },
      },
    ]);
    expect(plan.journal).toEqual({ v: 1, at: now });
  });
});

describe('the end of a run', () => {
  it("every plan that ends a run puts the run's terminal event last, agent_end just before it", () => {
    const run = runRecord();
    const final = decideReply([{ type: 'text', text: 'done' }], 1, 5);
    const plans = [
      replyCommit({
        run,
        iteration: 1,
        parts: [{ type: 'text', text: 'done' }],
        usage: run.usage,
        costUsd: 0,
        wastedCalls: 0,
        decision: final,
        chatLength: 1,
        now,
      }),
      cancelCommit(run, 'stop', now),
      completionCommit(run, { v: 1 }, 'the answer', now),
      failureCommit(run, { code: 'step_stalled', message: 'stalled' }, now),
    ];
    for (const plan of plans) {
      const kinds = plan.events.map((event) => event.kind);
      expect(runEndKinds).toContain(kinds.at(-1));
      expect(kinds.at(-2)).toBe('agent_end');
      expect(kinds.filter((kind) => runEndKinds.includes(kind))).toHaveLength(1);
    }
  });
});

describe('tool events', () => {
  it('tool_call_start carries the call', () => {
    const event = toolStartEvent(runRecord(), 2, { id: 'c1', name: 'search', arguments: '{"q":"x"}' }, now);
    storedEventSchema.parse(event);
    expect(event.data).toEqual({ iteration: 2, tool_call_id: 'c1', name: 'search', arguments: '{"q":"x"}' });
  });

  it('tool_call_end carries a preview of the outcome, at the outcome time, and how it was interrupted', () => {
    const at = '2024-05-01T12:00:09.000Z';
    const long = 'y'.repeat(5000);
    const event = toolEndEvent(
      runRecord(),
      2,
      { id: 'c1', name: 'search' },
      { v: 1, is_error: false, interrupted: 'rerun', at },
      long,
    );
    storedEventSchema.parse(event);
    expect(event.time).toBe(at);
    expect(event.kind === 'tool_call_end' && event.data.content.length).toBeLessThan(long.length);
    expect(event.data).toMatchObject({ tool_call_id: 'c1', is_error: false, interrupted: 'rerun' });
    const plain = toolEndEvent(
      runRecord(),
      2,
      { id: 'c1', name: 'search' },
      { v: 1, is_error: false, at },
      'ok',
    );
    expect(plain.data).not.toHaveProperty('interrupted');
  });
});

describe('usage and cost of a reply', () => {
  it('adds the request cost to the run and hands the request usage to the session and agent sums', () => {
    const plan = reply([{ type: 'text', text: 'done' }], 2);
    expect(plan.record?.cost_usd).toBe(0.75);
    expect(plan.usage).toMatchObject({ ...usage, cost_usd: 0.25, retry_waste_cost_usd: 0 });
  });
});
