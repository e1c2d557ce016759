import { describe, expect, it } from 'vitest';
import {
  buildEvent,
  type EventKind,
  eventKinds,
  previewContent,
  runEndKinds,
  type StoredEvent,
  storedEventSchema,
  toolContentPreviewLimit,
} from '../../src/events/event.js';

const run = { id: 'run_0123456789abcdef_abcdefghjk', agent: 'researcher' };
const time = '2024-05-01T12:00:00.000Z';
const usage = { input_tokens: 1, output_tokens: 2, cached_input_tokens: 0, requests: 1 };

const examples: { [Kind in EventKind]: () => StoredEvent } = {
  run_started: () => buildEvent('run_started', run, { input: 'What is 6 * 7?' }, time),
  agent_start: () => buildEvent('agent_start', run, { parent_run_id: null, depth: 0, prefix: '🤖' }, time),
  agent_end: () =>
    buildEvent('agent_end', run, { status: 'completed', parent_run_id: null, depth: 0, prefix: 'x' }, time),
  ask_user: () =>
    buildEvent(
      'ask_user',
      run,
      {
        question_id: 'q1',
        kind: 'approval',
        question: 'Run charge_card?',
        options: ['approve', 'reject'],
        tool: { name: 'charge_card', tool_call_id: 'c1', arguments: '{"amount":5}' },
        timeout_at: null,
      },
      time,
    ),
  question_answered: () =>
    buildEvent('question_answered', run, { question_id: 'q1', answered_by: 'user', answer: 'yes' }, time),
  progress: () => buildEvent('progress', run, { fraction: 0.5, message: 'half way' }, time),
  compaction: () =>
    buildEvent(
      'compaction',
      run,
      { iteration: 7, up_to: 12, tokens_before: 9000, tokens_after: 1200, reason: 'threshold' },
      time,
    ),
  loop_detected: () =>
    buildEvent(
      'loop_detected',
      run,
      { iteration: 4, tool: 'read_file', arguments: '{"path":"a"}', count: 3, window_size: 6 },
      time,
    ),
  reflection: () => buildEvent('reflection', run, { iteration: 5, failures: 3 }, time),
  file_change: () =>
    buildEvent(
      'file_change',
      run,
      {
        iteration: 2,
        tool_call_id: 'c1',
        name: 'write_file',
        path: 'notes/plan.md',
        change: 'modified',
        size: 12,
        size_before: 10,
        lines_added: 1,
        lines_removed: 0,
      },
      time,
    ),
  answer_rejected: () =>
    buildEvent(
      'answer_rejected',
      run,
      {
        iteration: 2,
        check: 'output_guardrail',
        reason: 'the answer matches the denied pattern /x/',
        retry: 1,
        max_retries: 2,
      },
      time,
    ),
  text_delta: () => buildEvent('text_delta', run, { iteration: 2, attempt: 1, delta: 'Hel' }, time),
  attempt_retried: () => buildEvent('attempt_retried', run, { iteration: 2, attempt: 2 }, time),
  message_added: () =>
    buildEvent(
      'message_added',
      run,
      {
        chat_id: 'main',
        index: 0,
        message: {
          id: 'm1',
          sender: 'user',
          role: 'user',
          parts: [{ type: 'text', text: 'hi' }],
          metadata: {},
          created_at: time,
        },
      },
      time,
    ),
  tool_call_start: () =>
    buildEvent(
      'tool_call_start',
      run,
      { iteration: 1, tool_call_id: 'c1', name: 'calculate', arguments: '{}' },
      time,
    ),
  tool_call_end: () =>
    buildEvent(
      'tool_call_end',
      run,
      {
        iteration: 1,
        tool_call_id: 'c1',
        name: 'calculate',
        is_error: false,
        content: '42',
        interrupted: 'rerun',
      },
      time,
    ),
  error: () =>
    buildEvent(
      'error',
      run,
      {
        step: 'iteration 1',
        attempt: 1,
        code: 'model_server_error',
        message: '502',
        final: false,
        retry_in_ms: 500,
      },
      time,
    ),
  run_completed: () => buildEvent('run_completed', run, { result: '42', usage, iterations: 2 }, time),
  run_failed: () =>
    buildEvent(
      'run_failed',
      run,
      { error: { code: 'max_iterations', message: 'too many' }, usage, iterations: 5 },
      time,
    ),
  run_cancelled: () => buildEvent('run_cancelled', run, { reason: 'user' }, time),
  run_retried: () =>
    buildEvent(
      'run_retried',
      run,
      { retried_run_id: 'run_0123456789abcdef_0000000000', from_iteration: 2 },
      time,
    ),
  run_forked: () =>
    buildEvent(
      'run_forked',
      run,
      {
        from_run_id: 'run_0123456789abcdef_0000000000',
        fork_session_id: 'ses_0123456789abcdeg',
        at_iteration: 2,
      },
      time,
    ),
  waiting_for_worker: () =>
    buildEvent('waiting_for_worker', run, { missing: ['middleware:audit'], since: time }, time),
  worker_found: () =>
    buildEvent('worker_found', run, { missing: ['middleware:audit'], worker_id: 'w1' }, time),
};

describe('buildEvent', () => {
  it.each(eventKinds)('a %s event validates against storedEventSchema', (kind) => {
    const event = examples[kind]();
    expect(event).toMatchObject({ v: 1, kind, run_id: run.id, agent: run.agent, time });
    expect(storedEventSchema.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
  });

  it('the schema rejects data of another kind, extra keys and bad times', () => {
    const completed = examples.run_completed();
    expect(storedEventSchema.safeParse({ ...completed, kind: 'run_cancelled' }).success).toBe(false);
    expect(storedEventSchema.safeParse({ ...completed, extra: 1 }).success).toBe(false);
    expect(storedEventSchema.safeParse({ ...completed, data: { ...completed.data, extra: 1 } }).success).toBe(
      false,
    );
    expect(storedEventSchema.safeParse({ ...completed, time: 'now' }).success).toBe(false);
    expect(storedEventSchema.safeParse({ ...completed, v: 2 }).success).toBe(false);
    expect(storedEventSchema.safeParse({ ...completed, kind: 'run_paused' }).success).toBe(false);
  });

  it('the terminal kinds are the run_* endings', () => {
    expect([...runEndKinds].sort()).toEqual(['run_cancelled', 'run_completed', 'run_failed']);
  });
});

describe('previewContent', () => {
  it('keeps content up to the limit as is', () => {
    expect(previewContent('short')).toBe('short');
    const exact = 'x'.repeat(toolContentPreviewLimit);
    expect(previewContent(exact)).toBe(exact);
  });

  it('cuts longer content and says how much was cut', () => {
    const long = `${'a'.repeat(toolContentPreviewLimit)}${'b'.repeat(1234)}`;
    const preview = previewContent(long);
    expect(preview.startsWith('a'.repeat(toolContentPreviewLimit))).toBe(true);
    expect(preview).not.toContain('b');
    expect(preview).toContain('(1234 more characters)');
    expect(previewContent(`${'a'.repeat(toolContentPreviewLimit)}b`)).toContain('(1 more characters)');
  });
});
