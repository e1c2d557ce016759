import type { Message, Part, ToolCallPart } from '../../chat/index.js';
import { buildEvent, previewContent, type StoredEvent } from '../../events/event.js';
import { addUsage, type Usage } from '../../models/usage.js';
import { messageId } from '../ids.js';
import type { ReplyEntry, ResultsEntry, ToolOutcomeEntry } from '../journal.js';
import type { RunError, RunRecord } from '../run-record.js';
import type { ReplyDecision } from './reply-decision.js';

/** Everything one commit writes, computed from plain data. */
export interface CommitPlan<JournalValue> {
  journal: JournalValue;
  /** The new run record, or undefined when the commit leaves it unchanged. */
  record: RunRecord | undefined;
  messages: Message[];
  events: StoredEvent[];
  finished: boolean;
}

function messageAddedEvents(run: RunRecord, messages: readonly Message[], chatLength: number, now: string) {
  return messages.map((message, offset) =>
    buildEvent('message_added', run, { chat_id: run.chat_id, index: chatLength + offset, message }, now),
  );
}

export function replyCommit(input: {
  run: RunRecord;
  iteration: number;
  parts: Part[];
  usage: Usage;
  decision: ReplyDecision;
  chatLength: number;
  now: string;
}): CommitPlan<ReplyEntry> {
  const { run, iteration, parts, decision, chatLength, now } = input;
  const message: Message = {
    id: messageId.reply(run.id, iteration),
    sender: run.agent,
    role: 'assistant',
    parts,
    metadata: { iteration },
    created_at: now,
  };
  const usage = addUsage(run.usage, input.usage);
  const record: RunRecord = {
    ...run,
    status: decision.kind === 'tools' ? 'running' : decision.kind === 'final' ? 'completed' : 'failed',
    iteration,
    usage,
    updated_at: now,
    started_at: run.started_at ?? now,
  };
  const events = messageAddedEvents(run, [message], chatLength, now);
  if (decision.kind === 'final') {
    record.result = decision.result;
    record.finished_at = now;
    events.push(
      buildEvent('run_completed', run, { result: decision.result, usage, iterations: iteration }, now),
    );
  } else if (decision.kind === 'failed') {
    record.error = { code: decision.code, message: decision.message };
    record.finished_at = now;
    events.push(buildEvent('run_failed', run, { error: record.error, usage, iterations: iteration }, now));
  }
  const toolCalls = decision.kind === 'tools' ? decision.calls : [];
  return {
    journal: {
      v: 1,
      index: chatLength,
      tool_calls: toolCalls.map((call) => ({ id: call.id, name: call.name })),
      decision: decision.kind,
    },
    record,
    messages: [message],
    events,
    finished: decision.kind !== 'tools',
  };
}

/** Appends the results of an iteration's tool calls, in the order the model issued the calls. */
export function resultsCommit(input: {
  run: RunRecord;
  iteration: number;
  calls: readonly Pick<ToolCallPart, 'id' | 'name'>[];
  outcomes: readonly ToolOutcomeEntry[];
  chatLength: number;
  now: string;
}): CommitPlan<ResultsEntry> {
  const { run, iteration, calls, outcomes, chatLength, now } = input;
  const messages: Message[] = calls.map((call, index) => {
    const outcome = outcomes[index];
    if (!outcome) throw new Error(`no outcome for tool call ${index} of iteration ${iteration}`);
    return {
      id: messageId.toolResult(run.id, iteration, index),
      sender: call.name,
      role: 'tool',
      parts: [
        { type: 'tool_result', tool_call_id: call.id, content: outcome.content, is_error: outcome.is_error },
      ],
      metadata: { iteration },
      created_at: now,
    };
  });
  return {
    journal: { v: 1, index: chatLength, count: messages.length },
    record: undefined,
    messages,
    events: messageAddedEvents(run, messages, chatLength, now),
    finished: false,
  };
}

/** A step failed for good: the run ends as failed with the error recorded. */
export function failureCommit(
  run: RunRecord,
  error: RunError,
  now: string,
): CommitPlan<{ v: 1; at: string }> {
  const record: RunRecord = { ...run, status: 'failed', error, updated_at: now, finished_at: now };
  return {
    journal: { v: 1, at: now },
    record,
    messages: [],
    events: [buildEvent('run_failed', run, { error, usage: run.usage, iterations: run.iteration }, now)],
    finished: true,
  };
}

export function toolStartEvent(
  run: RunRecord,
  iteration: number,
  call: Pick<ToolCallPart, 'id' | 'name' | 'arguments'>,
  now: string,
): StoredEvent {
  return buildEvent(
    'tool_call_start',
    run,
    { iteration, tool_call_id: call.id, name: call.name, arguments: call.arguments },
    now,
  );
}

export function toolEndEvent(
  run: RunRecord,
  iteration: number,
  call: Pick<ToolCallPart, 'id' | 'name'>,
  outcome: ToolOutcomeEntry,
): StoredEvent {
  return buildEvent(
    'tool_call_end',
    run,
    {
      iteration,
      tool_call_id: call.id,
      name: call.name,
      is_error: outcome.is_error,
      content: previewContent(outcome.content),
      ...(outcome.interrupted ? { interrupted: outcome.interrupted } : {}),
    },
    outcome.at,
  );
}
