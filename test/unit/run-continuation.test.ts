import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { storedEventSchema } from '../../src/events/event.js';
import {
  forkLength,
  planFork,
  planRetry,
  type RetryPoint,
  recorderOf,
  retryRefusal,
} from '../../src/workflows/core/run-continuation.js';
import { planRunCreation } from '../../src/workflows/core/run-creation.js';
import { messageId } from '../../src/workflows/ids.js';
import type { ReplyEntry } from '../../src/workflows/journal.js';
import { type RunRecord, runRecordSchema } from '../../src/workflows/run-record.js';

const sessionId = 'ses_0123456789abcdef';
const runId = 'run_0123456789abcdef_abcdefghjk';
const retryId = 'run_0123456789abcdef_retry00000';
const now = '2024-05-01T12:00:05.000Z';

function failedRun(overrides: Partial<RunRecord> = {}): RunRecord {
  const { record } = planRunCreation({
    sessionId,
    runId,
    agent: 'assistant',
    chatId: 'main',
    parts: [{ type: 'text', text: 'go' }],
    newSession: undefined,
    chatLength: 0,
    now: '2024-05-01T12:00:00.000Z',
    maxIterations: 3,
  });
  return {
    ...record,
    status: 'failed',
    iteration: 2,
    usage: { input_tokens: 100, output_tokens: 10, cached_input_tokens: 0, requests: 2 },
    error: { code: 'model_server_error', message: '503' },
    finished_at: now,
    ...overrides,
  };
}

const reply = (index: number, calls = 0): ReplyEntry => ({
  v: 2,
  index,
  tool_calls: Array.from({ length: calls }, (_call, k) => ({ id: `c${k}`, name: 'add' })),
  decision: calls > 0 ? 'tools' : 'final',
});

const point = (overrides: Partial<RetryPoint> = {}): RetryPoint => ({
  lastReply: reply(3),
  calls: [],
  resultsAppended: true,
  recordedResults: [],
  startedCalls: [],
  chatLength: 5,
  ...overrides,
});

function message(id: string, role: Message['role'] = 'tool'): Message {
  return { id, sender: 'x', role, parts: [{ type: 'text', text: id }], metadata: {}, created_at: now };
}

describe('retryRefusal', () => {
  it('takes only a failed or cancelled root agent run not retried yet', () => {
    expect(retryRefusal(failedRun(), false)).toBeUndefined();
    expect(retryRefusal(failedRun({ status: 'cancelled' }), false)).toBeUndefined();
    expect(retryRefusal(failedRun({ status: 'completed' }), false)).toContain('is completed');
    expect(retryRefusal(failedRun({ status: 'running' }), false)).toContain('is running');
    expect(retryRefusal(failedRun({ retried_by: retryId }), false)).toContain(
      `retried already by ${retryId}`,
    );
    expect(
      retryRefusal(
        failedRun({ parent: { run_id: 'run_p', job_id: 'j', depth: 1 }, root_run_id: 'run_p' }),
        false,
      ),
    ).toContain('retry the root run run_p');
    expect(retryRefusal(failedRun(), true)).toContain("team's run");
  });
});

describe('planRetry', () => {
  it('continues the counters under a new id, from the iteration after the last recorded reply', () => {
    const retried = failedRun();
    const plan = planRetry({ retried, point: point(), runId: retryId, limits: { maxIterations: 6 }, now });
    expect(runRecordSchema.parse(plan.record)).toEqual(plan.record);
    expect(runRecordSchema.parse(plan.retried)).toEqual(plan.retried);
    expect(plan.record).toMatchObject({
      id: retryId,
      status: 'queued',
      iteration: 2,
      usage: retried.usage,
      max_iterations: 6,
      deadline_at: null,
      error: null,
      finished_at: null,
      origin: {
        kind: 'retry',
        run_id: runId,
        session_id: sessionId,
        at_iteration: null,
        input_run_id: runId,
      },
    });
    expect(plan.retried).toMatchObject({ id: runId, status: 'failed', retried_by: retryId });
    expect(plan.first.data).toMatchObject({ run_id: retryId, iteration: 3, previous_calls: 0 });
    expect(plan.journalFields).toEqual(['reply:2']);
    expect(plan.messages).toEqual([]);
    expect(plan.events.map((event) => event.kind)).toEqual(['run_retried', 'run_started', 'agent_start']);
    for (const event of plan.events) expect(storedEventSchema.parse(event)).toEqual(event);
  });

  it("keeps the retried run's limits unless new ones are given, and a retry of a retry keeps the first input", () => {
    const retried = failedRun({
      budget: { tokens: 500 },
      origin: {
        kind: 'retry',
        run_id: 'run_first',
        session_id: sessionId,
        at_iteration: null,
        input_run_id: 'run_first',
      },
    });
    const plan = planRetry({ retried, point: point(), runId: retryId, limits: {}, now });
    expect(plan.record.budget).toEqual({ tokens: 500 });
    expect(plan.record.max_iterations).toBe(3);
    expect(plan.record.origin?.kind !== 'schedule' && plan.record.origin?.input_run_id).toBe('run_first');
  });

  it('completes a batch left without results: recorded results stand, the others say whether they ran', () => {
    const recorded = message(messageId.toolResult(runId, 2, 0));
    const plan = planRetry({
      retried: failedRun({ status: 'cancelled', error: null }),
      point: point({
        lastReply: reply(4, 3),
        calls: [
          { id: 'c0', name: 'add' },
          { id: 'c1', name: 'charge' },
          { id: 'c2', name: 'mail' },
        ],
        resultsAppended: false,
        recordedResults: [recorded, undefined, undefined],
        startedCalls: [true, true, false],
        chatLength: 5,
      }),
      runId: retryId,
      limits: {},
      now,
    });
    expect(plan.messages[0]).toBe(recorded);
    expect(plan.messages.slice(1).map((entry) => [entry.id, entry.parts[0]])).toEqual([
      [
        messageId.toolResult(runId, 2, 1),
        expect.objectContaining({
          tool_call_id: 'c1',
          is_error: true,
          content: expect.stringContaining('may or may not'),
        }),
      ],
      [
        messageId.toolResult(runId, 2, 2),
        expect.objectContaining({
          tool_call_id: 'c2',
          is_error: true,
          content: expect.stringContaining('did not run'),
        }),
      ],
    ]);
    const added = plan.events.filter((event) => event.kind === 'message_added');
    expect(added.map((event) => [event.run_id, event.kind === 'message_added' && event.data.index])).toEqual([
      [retryId, 5],
      [retryId, 6],
      [retryId, 7],
    ]);
  });

  it('refuses a batch whose reply is no longer the end of the chat (another run wrote after it)', () => {
    expect(() =>
      planRetry({
        retried: failedRun(),
        point: point({
          lastReply: reply(4, 1),
          calls: [{ id: 'c0', name: 'add' }],
          resultsAppended: false,
          recordedResults: [undefined],
          startedCalls: [false],
          chatLength: 7,
        }),
        runId: retryId,
        limits: {},
        now,
      }),
    ).toThrow(/another run wrote to it/);
  });
});

describe('recorderOf', () => {
  it('finds the run of a chain of retries that recorded an iteration, the last of a retried run included', () => {
    // The first run recorded 1 and 2; its retry 3 and 4 (and a copy of reply 2); the retry's retry 5.
    const first = failedRun({ iteration: 2 });
    const retry = failedRun({ id: retryId, iteration: 4 });
    const latest = failedRun({ id: 'run_0123456789abcdef_retry11111', iteration: 5, status: 'completed' });
    const chain = [latest, retry, first];
    expect([1, 2, 3, 4, 5, 6].map((at) => recorderOf(chain, at).id)).toEqual([
      runId,
      runId,
      retryId,
      retryId,
      latest.id,
      latest.id,
    ]);
    expect(recorderOf([first], 1).id).toBe(runId);
  });
});

describe('forkLength and planFork', () => {
  const original = failedRun({ status: 'completed', error: null, iteration: 5 });
  const assistant = (calls: number): Message => ({
    ...message(messageId.reply(runId, 2), 'assistant'),
    parts: Array.from({ length: calls }, (_call, k) => ({
      type: 'tool_call' as const,
      id: `c${k}`,
      name: 'add',
      arguments: '{}',
    })),
  });

  it('copies through the reply, its guardrail feedback and its results, and stops before the next iteration', () => {
    const after = [
      assistant(2),
      message(messageId.toolResult(runId, 2, 0)),
      message(messageId.toolResult(runId, 2, 1)),
      message(messageId.effect(runId, 3, 'reflection'), 'user'),
    ];
    expect(forkLength(original, 2, reply(3, 2), after)).toBe(6);
    const feedback = [
      { ...assistant(0), parts: [{ type: 'text' as const, text: 'answer' }] },
      message(messageId.guardrailFeedback(runId, 2), 'user'),
    ];
    expect(forkLength(original, 2, reply(3), feedback)).toBe(5);
  });

  it('refuses a fork point whose calls have no results (400 naming at_iteration)', () => {
    expect(() => forkLength(original, 2, reply(3, 0), [assistant(1)])).toThrow(/^at_iteration: /);
  });

  it('plans a new session and run from zero, with the origin on the record and the agent_start', () => {
    const plan = planFork({
      original,
      at: 2,
      copied: 5,
      sessionId: 'ses_fedcba9876543210',
      runId: 'run_fedcba9876543210_fork000000',
      agent: 'strong',
      prefix: '💪',
      parts: [{ type: 'text', text: 'and now?' }],
      limits: {},
      metadata: { from: 'test' },
      now,
    });
    expect(runRecordSchema.parse(plan.record)).toEqual(plan.record);
    expect(plan.record).toMatchObject({
      agent: 'strong',
      iteration: 0,
      usage: { requests: 0 },
      origin: {
        kind: 'fork',
        run_id: runId,
        at_iteration: 2,
        input_run_id: 'run_fedcba9876543210_fork000000',
      },
    });
    expect(plan.messages.map((entry) => entry.id)).toEqual(['run_fedcba9876543210_fork000000-in']);
    expect(plan.events.map((event) => event.kind)).toEqual(['run_started', 'agent_start', 'message_added']);
    expect(plan.events[2]).toMatchObject({ data: { index: 5 } });
    expect(plan.originEvent).toMatchObject({
      kind: 'run_forked',
      run_id: 'run_fedcba9876543210_fork000000',
      data: { from_run_id: runId, fork_session_id: 'ses_fedcba9876543210', at_iteration: 2 },
    });
    for (const event of [...plan.events, plan.originEvent])
      expect(storedEventSchema.parse(event)).toEqual(event);
    expect(plan.first.data).toMatchObject({ iteration: 1, agent: 'strong' });
  });
});
