import type { ChatMessage, RatchetClientEvent } from '../../client/index.js';

/** The events marked in the transcript between its messages. */
type NoteEvent = Extract<
  RatchetClientEvent,
  {
    kind:
      | 'compaction'
      | 'loop_detected'
      | 'reflection'
      | 'answer_rejected'
      | 'error'
      | 'file_change'
      | 'run_retried'
      | 'run_forked'
      | 'waiting_for_worker'
      | 'worker_found';
  }
>;

/** A marked moment of the run between its messages: a compaction, a loop, a reflection, a rejected answer… */
export interface TranscriptNote {
  id: string;
  /** Its event's kind; `retried` and `forked` for a run_retried and a run_forked. */
  kind: Exclude<NoteEvent['kind'], 'run_retried' | 'run_forked'> | 'retried' | 'forked';
  time: string;
  text: string;
}

/** A tool call started and not ended yet. */
export interface RunningCall {
  toolCallId: string;
  name: string;
}

/** What the transcript shows at one moment. */
export interface Transcript {
  /** The chat's messages by index (for a root run, the session's chat; for a child run, its own). */
  messages: ChatMessage[];
  notes: TranscriptNote[];
  /** The text of replies in progress (agents with options.stream), by iteration. */
  streaming: Array<{ iteration: number; text: string }>;
  running: RunningCall[];
  /** The event stream ended with the run (its terminal event came). */
  ended: boolean;
  error: string | undefined;
}

export const emptyTranscript: Transcript = {
  messages: [],
  notes: [],
  streaming: [],
  running: [],
  ended: false,
  error: undefined,
};

/**
 * A run's transcript as it is built from its chat and its session's events: plain data and functions (no
 * DOM, no fetch), so what each event does to it is tested without a browser. Events of other runs of the
 * session are left out (a child run has its own page).
 */
export interface TranscriptState {
  runId: string;
  messages: Map<string, ChatMessage>;
  notes: TranscriptNote[];
  /** Streamed text by iteration, of the latest attempt seen. */
  streaming: Map<number, { attempt: number; text: string }>;
  running: Map<string, RunningCall>;
  ended: boolean;
  error: string | undefined;
}

export function newTranscriptState(runId: string): TranscriptState {
  return {
    runId,
    messages: new Map(),
    notes: [],
    streaming: new Map(),
    running: new Map(),
    ended: false,
    error: undefined,
  };
}

/** Messages read from the chat (GET /v1/sessions/:id/messages). */
export function addMessages(state: TranscriptState, messages: readonly ChatMessage[]): void {
  for (const message of messages) state.messages.set(message.id, message);
}

/** Takes one event of the session into the state; false when it changes nothing shown. */
export function applyEvent(state: TranscriptState, event: RatchetClientEvent): boolean {
  if (event.run_id !== state.runId) return false;
  switch (event.kind) {
    case 'message_added': {
      const { message, index } = event.data;
      state.messages.set(message.id, { ...message, index });
      // The recorded reply replaces its streamed text.
      const reply = /-i(\d+)-a$/.exec(message.id);
      if (reply !== null) state.streaming.delete(Number(reply[1]));
      return true;
    }
    case 'text_delta': {
      const current = state.streaming.get(event.data.iteration);
      if (current !== undefined && current.attempt > event.data.attempt) return false;
      const text = current?.attempt === event.data.attempt ? current.text : '';
      state.streaming.set(event.data.iteration, {
        attempt: event.data.attempt,
        text: text + event.data.delta,
      });
      return true;
    }
    case 'attempt_retried': {
      // The text of the attempt that died is dropped; the new attempt's comes next.
      const current = state.streaming.get(event.data.iteration);
      if (current === undefined || current.attempt >= event.data.attempt) return false;
      state.streaming.set(event.data.iteration, { attempt: event.data.attempt, text: '' });
      return true;
    }
    case 'tool_call_start':
      state.running.set(event.data.tool_call_id, {
        toolCallId: event.data.tool_call_id,
        name: event.data.name,
      });
      return true;
    case 'tool_call_end':
      return state.running.delete(event.data.tool_call_id);
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
      state.running.clear();
      state.streaming.clear();
      return true;
    case 'compaction':
    case 'loop_detected':
    case 'reflection':
    case 'answer_rejected':
    case 'error':
    case 'file_change':
    case 'run_retried':
    case 'run_forked':
    case 'waiting_for_worker':
    case 'worker_found': {
      const text = noteText(event);
      state.notes.push({ id: event.id, kind: text.kind, time: event.time, text: text.text });
      return true;
    }
    // The run page shows these from the run itself (its status, progress and questions), not the transcript.
    case 'run_started':
    case 'agent_start':
    case 'agent_end':
    case 'ask_user':
    case 'question_answered':
    case 'progress':
      return false;
    default:
      // Every kind has its case above, so a new kind is a compile error here until it is shown (or not).
      event satisfies never;
      return false;
  }
}

/** What the view shows of the state now (copies: the state goes on changing). */
export function transcriptOf(state: TranscriptState): Transcript {
  return {
    messages: [...state.messages.values()].sort((a, b) => a.index - b.index),
    notes: [...state.notes],
    streaming: [...state.streaming]
      .filter(([, value]) => value.text !== '')
      .map(([iteration, value]) => ({ iteration, text: value.text })),
    running: [...state.running.values()],
    ended: state.ended,
    error: state.error,
  };
}

/** The words that mark an event in the transcript. */
function noteText(event: NoteEvent): { kind: TranscriptNote['kind']; text: string } {
  switch (event.kind) {
    case 'compaction': {
      const { iteration, up_to: upTo, tokens_before: before, tokens_after: after, reason } = event.data;
      const why = reason === 'threshold' ? 'over the threshold' : 'after a context-length error';
      return {
        kind: 'compaction',
        text: `Compacted before iteration ${iteration}: chat entries before ${upTo} are sent as a summary (about ${before} → ${after} tokens, ${why}).`,
      };
    }
    case 'loop_detected': {
      const { iteration, tool, count, window_size: window } = event.data;
      return {
        kind: 'loop_detected',
        text: `Loop detected at iteration ${iteration}: ${tool} called ${count} times with the same arguments in the last ${window} calls.`,
      };
    }
    case 'reflection':
      return {
        kind: 'reflection',
        text: `Reflection at iteration ${event.data.iteration}: tool calls failed ${event.data.failures} times in a row; the model was asked to reflect.`,
      };
    case 'answer_rejected': {
      const { iteration, check, retry, max_retries: most, reason } = event.data;
      return {
        kind: 'answer_rejected',
        text: `The answer of iteration ${iteration} was sent back (${check}, ${retry} of ${most}): ${reason}`,
      };
    }
    case 'error': {
      const { step, attempt, code, message, final } = event.data;
      return {
        kind: 'error',
        text: `Step ${step} attempt ${attempt} failed: ${code}: ${message}${final ? '' : ' (it will be retried)'}`,
      };
    }
    case 'file_change': {
      const { path, change, size, size_before: before, name } = event.data;
      const { lines_added: added, lines_removed: removed, more_changes: more } = event.data;
      const lines = added === undefined ? '' : `+${added} −${removed ?? 0} lines, `;
      const bytes = size === null ? `was ${before ?? 0} bytes` : `${size} bytes`;
      const others = more === undefined ? '' : ` (and ${more} more files)`;
      return { kind: 'file_change', text: `${path} ${change} by ${name} (${lines}${bytes})${others}` };
    }
    case 'run_retried':
      return {
        kind: 'retried',
        text: `This run retries ${event.data.retried_run_id} from its iteration ${event.data.from_iteration}.`,
      };
    case 'run_forked':
      return {
        kind: 'forked',
        text: `Forked from ${event.data.from_run_id} at iteration ${event.data.at_iteration} into session ${event.data.fork_session_id}.`,
      };
    case 'waiting_for_worker':
      return {
        kind: 'waiting_for_worker',
        text: `No live worker has ${event.data.missing.join(', ')}: the run waits for one (it holds no worker).`,
      };
    case 'worker_found':
      return {
        kind: 'worker_found',
        text: `A worker with ${event.data.missing.join(', ')} appeared: the run goes on.`,
      };
  }
}
