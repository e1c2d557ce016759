import { describe, expect, it } from 'vitest';
import type { ChatMessage, RatchetClientEvent } from '../../src/client/index.js';
import {
  addMessages,
  applyEvent,
  newTranscriptState,
  transcriptOf,
} from '../../src/console/components/transcript-state.js';

// What each event of a session does to the console's transcript of one run (src/console/components/
// transcript-state.ts): the browser tests see finished runs, where streamed text is already replaced.

const runId = 'run_aaaaaaaaaaaaaaaa_bbbbbbbbbb';
const time = '2026-01-01T00:00:00.000Z';
let sequence = 0;

function event(kind: RatchetClientEvent['kind'], data: unknown, run = runId): RatchetClientEvent {
  sequence += 1;
  return { id: `${sequence}-0`, kind, run_id: run, agent: 'agent', time, data } as RatchetClientEvent;
}

function message(id: string, index: number, role: ChatMessage['role'], text: string): ChatMessage {
  return {
    id,
    index,
    role,
    sender: role === 'user' ? 'user' : 'agent',
    parts: [{ type: 'text', text }],
    metadata: {},
    created_at: time,
  };
}

describe('the console transcript', () => {
  it('shows streamed text by iteration until the recorded reply replaces it; a retried attempt starts over', () => {
    const state = newTranscriptState(runId);
    applyEvent(state, event('text_delta', { iteration: 1, attempt: 1, delta: 'Half ' }));
    applyEvent(state, event('text_delta', { iteration: 1, attempt: 1, delta: 'a reply' }));
    expect(transcriptOf(state).streaming).toEqual([{ iteration: 1, text: 'Half a reply' }]);

    // The attempt died: its text goes; the next attempt's deltas build the text again.
    expect(applyEvent(state, event('attempt_retried', { iteration: 1, attempt: 2 }))).toBe(true);
    expect(transcriptOf(state).streaming).toEqual([]);
    applyEvent(state, event('text_delta', { iteration: 1, attempt: 2, delta: 'Whole ' }));
    // A late delta of the dead attempt is dropped.
    expect(applyEvent(state, event('text_delta', { iteration: 1, attempt: 1, delta: 'stale' }))).toBe(false);
    applyEvent(state, event('text_delta', { iteration: 1, attempt: 2, delta: 'reply.' }));
    expect(transcriptOf(state).streaming).toEqual([{ iteration: 1, text: 'Whole reply.' }]);

    const reply = message(`${runId}-i1-a`, 1, 'assistant', 'Whole reply.');
    applyEvent(state, event('message_added', { chat_id: 'c', index: 1, message: reply }));
    const shown = transcriptOf(state);
    expect(shown.streaming).toEqual([]);
    expect(shown.messages.map((entry) => entry.id)).toEqual([`${runId}-i1-a`]);
  });

  it('orders messages by chat index, read or streamed, once each; other runs of the session are left out', () => {
    const state = newTranscriptState(runId);
    const input = message(`${runId}-in`, 0, 'user', 'hi');
    const reply = message(`${runId}-i1-a`, 1, 'assistant', 'hello');
    applyEvent(state, event('message_added', { chat_id: 'c', index: 1, message: reply }));
    addMessages(state, [input, reply]);
    applyEvent(state, event('message_added', { chat_id: 'c', index: 0, message: input }));
    const other = message('run_cccccccccccccccc_dddddddddd-i1-a', 0, 'assistant', 'not mine');
    expect(
      applyEvent(
        state,
        event('message_added', { chat_id: 'd', index: 0, message: other }, 'run_cccccccccccccccc_dddddddddd'),
      ),
    ).toBe(false);
    expect(transcriptOf(state).messages.map((entry) => entry.index)).toEqual([0, 1]);
  });

  it('marks compactions, loops, reflections, rejected answers and step errors, and tracks calls in flight', () => {
    const state = newTranscriptState(runId);
    applyEvent(
      state,
      event('compaction', {
        iteration: 4,
        up_to: 12,
        tokens_before: 9000,
        tokens_after: 2100,
        reason: 'threshold',
      }),
    );
    applyEvent(
      state,
      event('loop_detected', { iteration: 5, tool: 'search', arguments: '{}', count: 3, window_size: 6 }),
    );
    applyEvent(state, event('reflection', { iteration: 6, failures: 3 }));
    applyEvent(
      state,
      event('answer_rejected', {
        iteration: 7,
        check: 'output_guardrail',
        reason: 'no sources',
        retry: 1,
        max_retries: 2,
      }),
    );
    applyEvent(
      state,
      event('error', {
        step: `${runId}-i8`,
        attempt: 1,
        code: 'model_server_error',
        message: '503',
        final: false,
        retry_in_ms: 50,
      }),
    );
    applyEvent(
      state,
      event('tool_call_start', { iteration: 8, tool_call_id: 'call_1', name: 'search', arguments: '{}' }),
    );
    applyEvent(
      state,
      event('tool_call_start', { iteration: 8, tool_call_id: 'call_2', name: 'fetch', arguments: '{}' }),
    );
    applyEvent(
      state,
      event('tool_call_end', {
        iteration: 8,
        tool_call_id: 'call_1',
        name: 'search',
        is_error: false,
        content: 'ok',
      }),
    );

    const shown = transcriptOf(state);
    expect(shown.notes.map((note) => note.kind)).toEqual([
      'compaction',
      'loop_detected',
      'reflection',
      'answer_rejected',
      'error',
    ]);
    expect(shown.notes[0]?.text).toContain('chat entries before 12 are sent as a summary');
    expect(shown.notes[1]?.text).toContain('search called 3 times');
    expect(shown.notes[3]?.text).toContain('no sources');
    expect(shown.notes[4]?.text).toContain('(it will be retried)');
    expect(shown.running.map((call) => call.name)).toEqual(['fetch']);

    applyEvent(state, event('run_cancelled', { reason: 'stop' }));
    expect(transcriptOf(state).running).toEqual([]);
  });
});

describe('a file_change event in the console transcript', () => {
  it('is a note naming the file, the change, the tool and the diff stat', () => {
    const state = newTranscriptState(runId);
    applyEvent(
      state,
      event('file_change', {
        iteration: 1,
        tool_call_id: 'c1',
        name: 'edit_file',
        path: 'src/a.ts',
        change: 'modified',
        size: 120,
        size_before: 100,
        lines_added: 3,
        lines_removed: 1,
      }),
    );
    expect(transcriptOf(state).notes).toMatchObject([
      { kind: 'file_change', text: 'src/a.ts modified by edit_file (+3 −1 lines, 120 bytes)' },
    ]);
  });
});
