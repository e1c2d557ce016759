import { useEffect, useState } from 'preact/hooks';
import type { ChatMessage, RatchetClient, RatchetClientEvent } from '../../client/index.js';
import { describeError } from './error-note.js';

/** A marked moment of the run between its messages: a compaction, a loop, a reflection, a rejected answer… */
export interface TranscriptNote {
  id: string;
  kind: 'compaction' | 'loop_detected' | 'reflection' | 'answer_rejected' | 'error' | 'retried' | 'forked';
  time: string;
  text: string;
}

/** A tool call started and not ended yet. */
export interface RunningCall {
  toolCallId: string;
  name: string;
}

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

const empty: Transcript = {
  messages: [],
  notes: [],
  streaming: [],
  running: [],
  ended: false,
  error: undefined,
};

/**
 * What a run said and did, live: a root run's chat read once (GET /v1/sessions/:id/messages: a fork's copied
 * chat has no events), then the session's events through the client's iterator until the run's terminal
 * event: new messages, streamed text, tool calls in flight and the notes worth marking. Events of other runs
 * of the session are left out (a child run has its own page).
 */
export function useTranscript(
  client: RatchetClient,
  runId: string,
  sessionId: string | undefined,
  root: boolean,
) {
  const [transcript, setTranscript] = useState<Transcript>(empty);

  useEffect(() => {
    if (sessionId === undefined) return;
    const controller = new AbortController();
    const messages = new Map<string, ChatMessage>();
    const notes: TranscriptNote[] = [];
    const streaming = new Map<number, { attempt: number; text: string }>();
    const running = new Map<string, RunningCall>();
    let ended = false;
    let error: string | undefined;
    let scheduled = false;

    const publish = () => {
      if (scheduled || controller.signal.aborted) return;
      scheduled = true;
      // Many events arrive at once from the backlog: render once per frame, not once per event.
      requestAnimationFrame(() => {
        scheduled = false;
        if (controller.signal.aborted) return;
        setTranscript({
          messages: [...messages.values()].sort((a, b) => a.index - b.index),
          notes: [...notes],
          streaming: [...streaming].map(([iteration, value]) => ({ iteration, text: value.text })),
          running: [...running.values()],
          ended,
          error,
        });
      });
    };

    const onEvent = (event: RatchetClientEvent) => {
      if (event.run_id !== runId) return;
      switch (event.kind) {
        case 'message_added': {
          const { message, index } = event.data;
          messages.set(message.id, { ...message, index });
          const reply = /-i(\d+)-a$/.exec(message.id);
          if (reply !== null) streaming.delete(Number(reply[1]));
          break;
        }
        case 'text_delta': {
          const current = streaming.get(event.data.iteration);
          if (current !== undefined && current.attempt > event.data.attempt) break;
          const text = current?.attempt === event.data.attempt ? current.text : '';
          streaming.set(event.data.iteration, { attempt: event.data.attempt, text: text + event.data.delta });
          break;
        }
        case 'attempt_retried': {
          const current = streaming.get(event.data.iteration);
          if (current !== undefined && current.attempt < event.data.attempt) {
            streaming.set(event.data.iteration, { attempt: event.data.attempt, text: '' });
          }
          break;
        }
        case 'tool_call_start':
          running.set(event.data.tool_call_id, {
            toolCallId: event.data.tool_call_id,
            name: event.data.name,
          });
          break;
        case 'tool_call_end':
          running.delete(event.data.tool_call_id);
          break;
        case 'compaction':
          notes.push(
            note(
              event,
              'compaction',
              `Compacted before iteration ${event.data.iteration}: chat entries before ${event.data.up_to} are sent as a summary (about ${event.data.tokens_before} → ${event.data.tokens_after} tokens, ${event.data.reason === 'threshold' ? 'over the threshold' : 'after a context-length error'}).`,
            ),
          );
          break;
        case 'loop_detected':
          notes.push(
            note(
              event,
              'loop_detected',
              `Loop detected at iteration ${event.data.iteration}: ${event.data.tool} called ${event.data.count} times with the same arguments in the last ${event.data.window_size} calls.`,
            ),
          );
          break;
        case 'reflection':
          notes.push(
            note(
              event,
              'reflection',
              `Reflection at iteration ${event.data.iteration}: tool calls failed ${event.data.failures} times in a row; the model was asked to reflect.`,
            ),
          );
          break;
        case 'answer_rejected':
          notes.push(
            note(
              event,
              'answer_rejected',
              `The answer of iteration ${event.data.iteration} was sent back (${event.data.check}, ${event.data.retry} of ${event.data.max_retries}): ${event.data.reason}`,
            ),
          );
          break;
        case 'error':
          notes.push(
            note(
              event,
              'error',
              `Step ${event.data.step} attempt ${event.data.attempt} failed: ${event.data.code}: ${event.data.message}${event.data.final ? '' : ' (it will be retried)'}`,
            ),
          );
          break;
        case 'run_retried':
          notes.push(
            note(
              event,
              'retried',
              `This run retries ${event.data.retried_run_id} from its iteration ${event.data.from_iteration}.`,
            ),
          );
          break;
        case 'run_forked':
          notes.push(
            note(
              event,
              'forked',
              `Forked from ${event.data.from_run_id} at iteration ${event.data.at_iteration} into session ${event.data.fork_session_id}.`,
            ),
          );
          break;
        case 'run_completed':
        case 'run_failed':
        case 'run_cancelled':
          running.clear();
          streaming.clear();
          break;
        default:
          return;
      }
      publish();
    };

    const follow = async () => {
      try {
        if (root) {
          for (const message of await client.messages(sessionId, {}, { signal: controller.signal })) {
            messages.set(message.id, message);
          }
          publish();
        }
        for await (const event of client.events(sessionId, {
          signal: controller.signal,
          untilRunEnds: runId,
        })) {
          onEvent(event);
        }
        ended = true;
      } catch (failure) {
        if (controller.signal.aborted) return;
        error = describeError(failure);
      }
      publish();
    };
    void follow();
    return () => controller.abort();
  }, [client, runId, sessionId, root]);

  return transcript;
}

function note(event: RatchetClientEvent, kind: TranscriptNote['kind'], text: string): TranscriptNote {
  return { id: event.id, kind, time: event.time, text };
}
