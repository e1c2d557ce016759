import type { ComponentChildren } from 'preact';
import type { ChatMessage } from '../../client/index.js';
import { formatTime } from '../format.js';
import { runHref } from '../router.js';
import { prettyJson } from './question-form.js';
import { ModelText, Text, visibleText } from './text.js';
import type { Transcript, TranscriptNote } from './transcript-state.js';

export interface ForkPoint {
  runId: string;
  iteration: number;
}

export interface TranscriptViewProps {
  runId: string;
  transcript: Transcript;
  /** Offered on each recorded reply when the run may be forked (a root run); undefined: not offered. */
  onFork?: (point: ForkPoint) => void;
}

/** `<run>-i<n>-…`: the run and iteration a message belongs to (ids are deterministic: src/workflows/ids.ts). */
function placeOf(messageId: string): { runId: string; iteration: number; reply: boolean } | undefined {
  const match = /^(run_[0-9a-z_]+?)-i(\d+)-(a|r\d+|g|e-.+)$/.exec(messageId);
  if (match === null) return undefined;
  return { runId: match[1] ?? '', iteration: Number(match[2]), reply: match[3] === 'a' };
}

/**
 * The transcript: each message with its sender and parts (text as text, tool calls and results in
 * <details>), the notes (compactions, loops, reflections, rejected answers) where they happened, streamed
 * text as it arrives, and the calls in flight. Test ids: transcript, message (data-role, data-index),
 * tool-call, tool-result, transcript-note (data-kind), streaming-text, running-call, fork-at-<n>.
 */
export function TranscriptView({ runId, transcript, onFork }: TranscriptViewProps) {
  const items: ComponentChildren[] = [];
  const notes = [...transcript.notes].sort((a, b) => a.time.localeCompare(b.time));
  let nextNote = 0;
  for (const message of transcript.messages) {
    while (nextNote < notes.length && (notes[nextNote]?.time ?? '') < message.created_at) {
      const current = notes[nextNote++];
      if (current !== undefined) items.push(<NoteView key={current.id} note={current} />);
    }
    items.push(<MessageView key={message.id} runId={runId} message={message} onFork={onFork} />);
  }
  for (const current of notes.slice(nextNote)) items.push(<NoteView key={current.id} note={current} />);

  return (
    <div class="transcript" data-testid="transcript" aria-live="polite" aria-relevant="additions">
      {items.length === 0 && transcript.streaming.length === 0 && <p class="muted">No messages yet.</p>}
      {items}
      {transcript.streaming.map((piece) => (
        <div class="message message-assistant streaming" key={`stream-${piece.iteration}`}>
          <div class="message-head">
            <strong>model</strong> <span>iteration {piece.iteration}, writing…</span>
          </div>
          <p class="model-text" data-testid="streaming-text">
            <ModelText value={piece.text} />
          </p>
        </div>
      ))}
      {transcript.running.map((call) => (
        <p class="note" key={call.toolCallId} data-testid="running-call">
          Calling <code>{visibleText(call.name)}</code>…
        </p>
      ))}
      {transcript.error !== undefined && (
        <p class="error" role="alert">
          The event stream stopped: {visibleText(transcript.error)}
        </p>
      )}
    </div>
  );
}

const noteLabel: Record<TranscriptNote['kind'], string> = {
  compaction: 'Compaction',
  loop_detected: 'Loop',
  reflection: 'Reflection',
  answer_rejected: 'Answer sent back',
  error: 'Step error',
  retried: 'Retry',
  forked: 'Fork',
  file_change: 'File',
  waiting_for_worker: 'Waiting for a worker',
  worker_found: 'Worker found',
};

function NoteView({ note }: { note: TranscriptNote }) {
  return (
    <p class="note" data-testid="transcript-note" data-kind={note.kind}>
      <strong>{noteLabel[note.kind]}:</strong> {visibleText(note.text)}
    </p>
  );
}

function MessageView(props: { runId: string; message: ChatMessage; onFork?: (point: ForkPoint) => void }) {
  const { runId, message, onFork } = props;
  const place = placeOf(message.id);
  const otherRun = place !== undefined && place.runId !== runId ? place.runId : undefined;
  if (message.role === 'system') {
    return (
      <details
        class="message message-system"
        data-testid="message"
        data-role="system"
        data-index={message.index}
      >
        <summary>System instructions</summary>
        <Parts message={message} />
      </details>
    );
  }
  return (
    <article
      class={`message message-${message.role}`}
      data-testid="message"
      data-role={message.role}
      data-index={message.index}
      aria-label={`${message.role} message ${message.index}`}
    >
      <div class="message-head">
        <strong>
          <Text value={message.sender} />
        </strong>
        <span>{message.role}</span>
        {place !== undefined && <span>iteration {place.iteration}</span>}
        {otherRun !== undefined && (
          <span>
            of <a href={runHref(otherRun)}>{otherRun}</a>
          </span>
        )}
        <time dateTime={message.created_at}>{formatTime(message.created_at)}</time>
        {onFork !== undefined && place?.reply === true && (
          <button
            type="button"
            class="secondary small"
            onClick={() => onFork({ runId: place.runId, iteration: place.iteration })}
            data-testid={`fork-at-${place.iteration}`}
            aria-label={`Fork here, at iteration ${place.iteration}`}
          >
            Fork here
          </button>
        )}
      </div>
      <Parts message={message} />
    </article>
  );
}

function Parts({ message }: { message: ChatMessage }) {
  return (
    <>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        switch (part.type) {
          case 'text':
            return (
              <p class="model-text" key={key}>
                <ModelText value={part.text} />
              </p>
            );
          case 'image':
            return (
              <p class="muted" key={key}>
                [image{part.url === undefined ? '' : `: ${visibleText(part.url)}`}]
              </p>
            );
          case 'tool_call':
            return (
              <details class="tool-call" key={key} data-testid="tool-call">
                <summary>
                  Calls <code>{visibleText(part.name)}</code>
                </summary>
                <pre class="code-block">{visibleText(prettyJson(part.arguments))}</pre>
              </details>
            );
          case 'tool_result':
            return (
              <details class="tool-result" key={key} data-testid="tool-result" data-error={part.is_error}>
                <summary>
                  {part.is_error ? 'Error result' : 'Result'} of <code>{visibleText(message.sender)}</code>
                </summary>
                <pre class="code-block">{visibleText(prettyJson(part.content))}</pre>
              </details>
            );
          default:
            return null;
        }
      })}
    </>
  );
}
