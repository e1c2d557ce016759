import { describe, expect, it } from 'vitest';
import { renderEvent } from '../../src/cli/render-event.js';
import { applyEvent, newTranscriptState } from '../../src/console/components/transcript-state.js';
import {
  buildEvent,
  type EventData,
  type EventKind,
  eventKinds,
  type RatchetEvent,
} from '../../src/events/event.js';
import { describeEvent } from '../../src/mcp/server/wait-with-progress.js';

// The three renderers of events (the CLI's lines, the console's transcript, the MCP server's progress
// notifications) each decide for every kind; a kind one of them leaves out is left out on purpose. These
// pin which kinds each leaves out, so that a new kind's place in each is a decision, not a default.

const run = { id: 'run_aaaaaaaaaaaaaaaa_bbbbbbbbbb', agent: 'coder' };
const time = '2026-01-01T00:00:00.000Z';
const usage = { input_tokens: 3, output_tokens: 4, cached_input_tokens: 0, requests: 1 };

/** One event of each kind (a record of every kind: a new kind must be added here too). */
const examples: { [Kind in EventKind]: EventData<Kind> } = {
  run_started: { input: 'Add 2 and 3' },
  agent_start: { parent_run_id: null, depth: 0, prefix: '🤖' },
  agent_end: { status: 'completed', parent_run_id: null, depth: 0, prefix: '🤖' },
  message_added: {
    chat_id: 'main',
    index: 1,
    message: {
      id: 'm1',
      sender: 'coder',
      role: 'assistant',
      parts: [{ type: 'text', text: 'It is 5.' }],
      metadata: {},
      created_at: time,
    },
  },
  tool_call_start: { iteration: 1, tool_call_id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' },
  tool_call_end: { iteration: 1, tool_call_id: 'c1', name: 'add', is_error: false, content: '5' },
  file_change: {
    iteration: 1,
    tool_call_id: 'c2',
    name: 'write_file',
    path: 'sum.txt',
    change: 'created',
    size: 1,
    size_before: null,
  },
  error: {
    step: 'iteration:1',
    attempt: 1,
    code: 'model_rate_limited',
    message: 'slow down',
    final: false,
    retry_in_ms: 100,
  },
  ask_user: {
    question_id: 'q1',
    kind: 'ask_user',
    question: 'Which numbers?',
    options: [],
    tool: null,
    timeout_at: null,
  },
  question_answered: { question_id: 'q1', answered_by: 'user', answer: '2 and 3' },
  progress: { fraction: 0.5, message: 'half way' },
  compaction: { iteration: 2, up_to: 4, tokens_before: 900, tokens_after: 100, reason: 'threshold' },
  loop_detected: { iteration: 3, tool: 'add', arguments: '{}', count: 3, window_size: 6 },
  answer_rejected: { iteration: 3, check: 'output_guardrail', reason: 'no', retry: 1, max_retries: 2 },
  reflection: { iteration: 4, failures: 3 },
  text_delta: { iteration: 2, attempt: 1, delta: 'It' },
  attempt_retried: { iteration: 2, attempt: 2 },
  run_completed: { result: 'It is 5.', usage, iterations: 2 },
  run_failed: { error: { code: 'max_iterations', message: 'too many' }, usage, iterations: 9 },
  run_cancelled: { reason: 'stopped' },
  run_retried: { retried_run_id: 'run_cccccccccccccccc_dddddddddd', from_iteration: 2 },
  run_forked: {
    from_run_id: 'run_cccccccccccccccc_dddddddddd',
    fork_session_id: 'ses_eeeeeeeeeeeeeeee',
    at_iteration: 2,
  },
  waiting_for_worker: { missing: ['tool:crm_lookup'], since: time },
  worker_found: { missing: ['tool:crm_lookup'], worker_id: 'w1' },
};

function eventOf(kind: EventKind, index: number): RatchetEvent {
  return { ...buildEvent(kind, run, examples[kind] as EventData<typeof kind>, time), id: `${index + 1}-0` };
}

const events = eventKinds.map(eventOf);

describe('every event kind, as each renderer shows it', () => {
  it('the CLI prints a line for each kind but the ones other lines show', () => {
    const silent = events.filter((event) => renderEvent(event) === undefined).map((event) => event.kind);
    expect(silent).toEqual([
      'agent_start',
      'agent_end',
      'text_delta',
      'attempt_retried',
      'run_retried',
      'run_forked',
    ]);
  });

  it("the console's transcript takes each kind but the ones the run page shows from the run itself", () => {
    // One transcript through every kind in turn: a call's end finds its start, a retried attempt its first.
    const state = newTranscriptState(run.id);
    const ignored = events
      .filter(({ v: _, ...event }) => !applyEvent(state, event))
      .map((event) => event.kind);
    expect(ignored).toEqual([
      'run_started',
      'agent_start',
      'agent_end',
      'ask_user',
      'question_answered',
      'progress',
    ]);
  });

  it('MCP progress describes each kind but the pieces of a streamed reply, most by their name', () => {
    const described = Object.fromEntries(events.map((event) => [event.kind, describeEvent(event)]));
    expect(described).toEqual({
      run_started: 'coder: run started',
      agent_start: 'coder: agent start',
      agent_end: 'coder: agent end',
      message_added: 'coder: assistant message added',
      tool_call_start: 'coder: calling add',
      tool_call_end: 'coder: add returned',
      file_change: 'coder: file change',
      error: 'coder: iteration:1 attempt 1 failed (model_rate_limited)',
      ask_user: 'coder asks (question q1): Which numbers?',
      question_answered: 'coder: question answered',
      progress: 'coder: half way',
      compaction: 'coder: compaction',
      loop_detected: 'coder: loop detected',
      answer_rejected: 'coder: answer rejected',
      reflection: 'coder: reflection',
      text_delta: undefined,
      attempt_retried: undefined,
      run_completed: 'coder: run completed',
      run_failed: 'coder: run failed',
      run_cancelled: 'coder: run cancelled',
      run_retried: 'coder: run retried',
      run_forked: 'coder: run forked',
      waiting_for_worker: 'coder: waiting for a worker that has tool:crm_lookup',
      worker_found: 'coder: a worker with tool:crm_lookup took the run on',
    });
  });
});
