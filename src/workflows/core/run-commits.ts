import type { ContextView, Message, Part, ToolCallPart } from '../../chat/index.js';
import { buildEvent, type EventData, previewContent, type StoredEvent } from '../../events/event.js';
import { mergePartialResults } from './partial-results.js';

/** The events effects ask for with a reply. */
type EffectEventKind = 'compaction' | 'loop_detected' | 'reflection' | 'progress';

import { addUsage, type Usage } from '../../models/usage.js';
import type { FileChanges } from '../../tools/index.js';
import { messageId } from '../ids.js';
import type { ReplyEntry, ResultsEntry, ToolOutcomeEntry } from '../journal.js';
import type { RunError, RunRecord, SubGoal } from '../run-record.js';
import type { CompactionEntry } from './effects/context-view.js';
import type { ReplyDecision } from './reply-decision.js';
import { resultMetadataOf } from './result-metadata.js';
import { definitionAfter, type UpgradeDecision } from './upgrade-decision.js';

/** Everything one commit writes, computed from plain data. */
export interface CommitPlan<JournalValue> {
  journal: JournalValue;
  /** The new run record, or undefined when the commit leaves it unchanged. */
  record: RunRecord | undefined;
  messages: Message[];
  events: StoredEvent[];
  finished: boolean;
  /** Added to the session's and the agent's usage sums (once, with the commit). */
  usage?: Readonly<Record<string, number>>;
}

/**
 * The end of an agent's run, placed in the run tree like its agent_start. It goes just before the run's
 * terminal event (run_completed, run_failed, run_cancelled), which is always the run's last event: a
 * client that stops reading at the terminal event has seen everything of the run.
 */
function agentEndEvent(ended: RunRecord, status: 'completed' | 'failed' | 'cancelled', now: string) {
  return buildEvent(
    'agent_end',
    ended,
    {
      status,
      parent_run_id: ended.parent?.run_id ?? null,
      depth: ended.parent?.depth ?? 0,
      prefix: ended.prefix,
      duration_ms: runDurationMs(ended, now),
      // The run as it ends: iterations, usage and tool calls of its last commit included.
      metadata: resultMetadataOf({ ...ended, finished_at: now }, now),
    },
    now,
  );
}

/** How long a run took until `now`: from its start, or from its creation when it never started. */
export function runDurationMs(run: Pick<RunRecord, 'started_at' | 'created_at'>, now: string): number {
  return Math.max(0, Date.parse(now) - Date.parse(run.started_at ?? run.created_at));
}

function messageAddedEvents(run: RunRecord, messages: readonly Message[], chatLength: number, now: string) {
  return messages.map((message, offset) => messageAddedEvent(run, message, chatLength + offset, now));
}

export function replyCommit(input: {
  run: RunRecord;
  /** Who wrote the reply when not the run's agent (the member in control of a handoff group). */
  sender?: string;
  iteration: number;
  parts: Part[];
  usage: Usage;
  /** What the request cost (USD), from the price table; 0 when the model has no price. */
  costUsd: number;
  /** Earlier model calls of this iteration that died before their reply was recorded. */
  wastedCalls: number;
  decision: ReplyDecision;
  chatLength: number;
  now: string;
  /** The version of the replying agent's `output_schema` (`options.output_schema_version`), if it names one. */
  outputSchemaVersion?: string;
  /** The provider and model that made the reply (none: no model call made it). */
  model?: { provider: string; model: string };
  /**
   * The effects' side of the request (absent when no effect planned it): the messages they added, which go
   * into the chat before the reply, the events they asked for, and what the journal records of the plan.
   */
  effects?: {
    inject: readonly Message[];
    events: readonly { kind: EffectEventKind; data: unknown }[];
    context: NonNullable<ReplyEntry['context']>;
  };
  /** What the agent's middleware decided around the model call (none: no middleware decided anything). */
  middleware?: NonNullable<ReplyEntry['middleware']>;
  /**
   * What the agent's effects decided after the reply (decision 0044): messages that follow it now, events,
   * and the journal's record (with the messages that wait for the next request).
   */
  after?: {
    messages: readonly Message[];
    events: readonly { kind: EffectEventKind; data: unknown }[];
    entry: NonNullable<ReplyEntry['after']>;
  };
  /** The run moves to another definition at this iteration, or stays and says why (decision 0030). */
  upgrade?: { decision: UpgradeDecision; requestedAt: string | null };
  /** A supervisor's sub-goals after the reply, its delegations so far, and the progress event of a change. */
  supervisor?: {
    goals: SubGoal[] | null;
    orchestrationSteps: number;
    progress: EventData<'progress'> | undefined;
  };
}): CommitPlan<ReplyEntry> {
  const { run, iteration, decision, now } = input;
  const injected = input.effects?.inject ?? [];
  // The reply follows the messages the effects added for its request.
  const chatLength = input.chatLength + injected.length;
  const message = replyMessage(input);
  const usage = addUsage(run.usage, input.usage);
  const going = decision.kind === 'tools' || decision.kind === 'retry' || decision.kind === 'ask';
  const record: RunRecord = {
    ...run,
    status: going ? 'running' : decision.kind === 'final' ? 'completed' : 'failed',
    iteration,
    guardrail_retries: run.guardrail_retries + (decision.kind === 'retry' ? 1 : 0),
    tool_calls:
      decision.kind === 'tools'
        ? {
            count: run.tool_calls.count + decision.calls.length,
            names: [...new Set([...run.tool_calls.names, ...decision.calls.map((call) => call.name)])].sort(),
          }
        : run.tool_calls,
    ...(decision.kind === 'tools'
      ? { partial_results: mergePartialResults(run.partial_results, decision.calls) }
      : {}),
    usage,
    cost_usd: run.cost_usd + input.costUsd,
    retry_waste: {
      calls: run.retry_waste.calls + input.wastedCalls,
      input_tokens: run.retry_waste.input_tokens + input.usage.input_tokens * input.wastedCalls,
      output_tokens: run.retry_waste.output_tokens + input.usage.output_tokens * input.wastedCalls,
      cost_usd: run.retry_waste.cost_usd + input.costUsd * input.wastedCalls,
    },
    updated_at: now,
    started_at: run.started_at ?? now,
  };
  const upgrade = input.upgrade;
  if (upgrade && run.definition)
    record.definition = definitionAfter(run.definition, upgrade.decision, now, upgrade.requestedAt);
  if (input.supervisor) {
    record.sub_goals = input.supervisor.goals;
    record.orchestration_steps = input.supervisor.orchestrationSteps;
  }
  const messages = [message];
  if (decision.kind === 'retry') {
    // The answer goes back to the model with the reason, as the user's next message.
    messages.push({
      id: messageId.guardrailFeedback(run.id, iteration),
      sender: 'guardrail',
      role: 'user',
      parts: [{ type: 'text', text: decision.feedback }],
      metadata: { iteration },
      created_at: now,
    });
  }
  messages.push(...(input.after?.messages ?? []));
  const events = [
    ...(upgrade && upgrade.decision.to !== upgrade.decision.from
      ? [
          buildEvent(
            'agent_upgraded',
            run,
            {
              from: upgrade.decision.from,
              to: upgrade.decision.to ?? null,
              changed: upgrade.decision.changed,
              reason: upgrade.decision.reason ?? null,
            },
            now,
          ),
        ]
      : []),
    ...[...(input.effects?.events ?? []), ...(input.after?.events ?? [])].map((event) =>
      buildEvent(event.kind, run, event.data as EventData<EffectEventKind>, now),
    ),
    // Before the rejected reply's message_added, so a client shows that reply as rejected, not as the answer.
    ...(decision.kind === 'retry'
      ? [buildEvent('answer_rejected', run, { iteration, ...decision.rejection }, now)]
      : []),
    ...messageAddedEvents(run, [...injected, ...messages], input.chatLength, now),
    ...(input.supervisor?.progress ? [buildEvent('progress', run, input.supervisor.progress, now)] : []),
  ];
  if ((decision.kind === 'final' || decision.kind === 'failed') && decision.contract)
    record.contract = decision.contract;
  // The version of the schema the answer was checked against: its contract's, else its output_schema's.
  if (decision.kind === 'final')
    record.schema_version = decision.contract?.schema_version ?? input.outputSchemaVersion ?? null;
  else if (decision.kind === 'failed' && decision.contract)
    record.schema_version = decision.contract.schema_version;
  if (decision.kind === 'final') {
    record.result = decision.result;
    record.partial = decision.partial ?? null;
    record.confidence = decision.confidence ?? null;
    record.finished_at = now;
    events.push(
      agentEndEvent(record, 'completed', now),
      buildEvent('run_completed', run, { result: decision.result, usage, iterations: iteration }, now),
    );
  } else if (decision.kind === 'failed') {
    record.error = { code: decision.code, message: decision.message };
    record.finished_at = now;
    events.push(
      agentEndEvent(record, 'failed', now),
      buildEvent('run_failed', run, { error: record.error, usage, iterations: iteration }, now),
    );
  }
  const toolCalls = decision.kind === 'tools' ? decision.calls : [];
  return {
    journal: {
      v: 2,
      index: chatLength,
      tool_calls: toolCalls.map((call) => ({ id: call.id, name: call.name })),
      decision: decision.kind,
      ...(input.model ? { model: input.model } : {}),
      ...(input.effects ? { context: input.effects.context } : {}),
      ...(input.middleware && input.middleware.length > 0 ? { middleware: input.middleware } : {}),
      ...(input.after ? { after: input.after.entry } : {}),
    },
    record,
    messages: [...injected, ...messages],
    events,
    finished: !going,
    usage: {
      ...input.usage,
      cost_usd: input.costUsd,
      retry_waste_input_tokens: input.usage.input_tokens * input.wastedCalls,
      retry_waste_output_tokens: input.usage.output_tokens * input.wastedCalls,
      retry_waste_cost_usd: input.costUsd * input.wastedCalls,
    },
  };
}

/** The chat message of an iteration's reply. */
export function replyMessage(input: {
  run: Pick<RunRecord, 'id' | 'agent'>;
  sender?: string;
  iteration: number;
  parts: Part[];
  usage: Usage;
  costUsd: number;
  now: string;
}): Message {
  return {
    id: messageId.reply(input.run.id, input.iteration),
    sender: input.sender ?? input.run.agent,
    role: 'assistant',
    parts: input.parts,
    // The request's own usage and cost travel with its reply (and so in its message_added event).
    metadata: { iteration: input.iteration, usage: input.usage, cost_usd: input.costUsd },
    created_at: input.now,
  };
}

/** The chat message of one tool call's result. */
export function toolResultMessage(input: {
  runId: string;
  iteration: number;
  index: number;
  call: Pick<ToolCallPart, 'id' | 'name'>;
  content: string;
  isError: boolean;
  /** Images the tool returned with its result. */
  images?: readonly { data: string; media_type: string }[] | undefined;
  now: string;
}): Message {
  return {
    id: messageId.toolResult(input.runId, input.iteration, input.index),
    sender: input.call.name,
    role: 'tool',
    parts: [
      {
        type: 'tool_result',
        tool_call_id: input.call.id,
        content: input.content,
        is_error: input.isError,
        ...(input.images && input.images.length > 0 ? { images: [...input.images] } : {}),
      },
    ],
    metadata: { iteration: input.iteration },
    created_at: input.now,
  };
}

export function messageAddedEvent(
  run: Pick<RunRecord, 'id' | 'agent' | 'chat_id'>,
  message: Message,
  index: number,
  now: string,
): StoredEvent {
  return buildEvent(
    'message_added',
    run,
    { chat_id: run.chat_id, index, message: withoutToolImages(message) },
    now,
  );
}

/**
 * The message as its event carries it: a tool result's images (screenshots, up to a megabyte each) stay in the
 * chat only, so the event log, capped by count, stays small; a client reads them from the chat.
 */
function withoutToolImages(message: Message): Message {
  if (!message.parts.some((part) => part.type === 'tool_result' && part.images !== undefined)) return message;
  const parts = message.parts.map((part) => {
    if (part.type !== 'tool_result' || part.images === undefined) return part;
    const { images: _images, ...rest } = part;
    return rest;
  });
  return { ...message, parts };
}

/**
 * Appends the results of an iteration's tool calls, in the order the model issued the calls. Normally the
 * last call's outcome commit does this; this plan is the fallback when a call left no result at all.
 */
export function resultsCommit(input: {
  run: RunRecord;
  messages: readonly Message[];
  chatLength: number;
  now: string;
}): CommitPlan<ResultsEntry> {
  const { run, messages, chatLength, now } = input;
  return {
    journal: { v: 1, index: chatLength, count: messages.length },
    record: undefined,
    messages: [...messages],
    events: messageAddedEvents(run, messages, chatLength, now),
    finished: false,
  };
}

/** The run is cancelled: its record and events (the cancel-run script writes them). */
export function cancelCommit(
  run: RunRecord,
  reason: string,
  now: string,
): { record: RunRecord; events: StoredEvent[] } {
  const record: RunRecord = {
    ...run,
    status: 'cancelled',
    error: { code: 'cancelled', message: reason },
    updated_at: now,
    finished_at: now,
  };
  return {
    record,
    events: [agentEndEvent(record, 'cancelled', now), buildEvent('run_cancelled', run, { reason }, now)],
  };
}

/** A team run ends with its answer (the last message of its shared chat); nothing is appended. */
export function completionCommit<Journal>(
  run: RunRecord,
  journal: Journal,
  result: string,
  now: string,
): CommitPlan<Journal> {
  const record: RunRecord = {
    ...run,
    status: 'completed',
    result,
    updated_at: now,
    started_at: run.started_at ?? now,
    finished_at: now,
  };
  const ended = buildEvent(
    'run_completed',
    run,
    { result, usage: run.usage, iterations: run.iteration },
    now,
  );
  return endingPlan(journal, record, agentEndEvent(record, 'completed', now), ended);
}

/** The last commit of a run: its record, then its agent_end and its terminal event (the last of all). */
function endingPlan<Journal>(
  journal: Journal,
  record: RunRecord,
  agentEnd: StoredEvent,
  terminal: StoredEvent,
): CommitPlan<Journal> {
  return { journal, record, messages: [], events: [agentEnd, terminal], finished: true };
}

/** A step failed for good: the run ends as failed with the error recorded. */
export function failureCommit(
  run: RunRecord,
  error: RunError,
  now: string,
): CommitPlan<{ v: 1; at: string }> {
  const record: RunRecord = { ...run, status: 'failed', error, updated_at: now, finished_at: now };
  const ended = buildEvent('run_failed', run, { error, usage: run.usage, iterations: run.iteration }, now);
  return endingPlan({ v: 1 as const, at: now }, record, agentEndEvent(record, 'failed', now), ended);
}

export function toolStartEvent(
  run: Pick<RunRecord, 'id' | 'agent'>,
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
  run: Pick<RunRecord, 'id' | 'agent'>,
  iteration: number,
  call: Pick<ToolCallPart, 'id' | 'name'>,
  outcome: ToolOutcomeEntry,
  content: string,
): StoredEvent {
  return buildEvent(
    'tool_call_end',
    run,
    {
      iteration,
      tool_call_id: call.id,
      name: call.name,
      is_error: outcome.is_error,
      content: previewContent(content),
      ...(outcome.interrupted ? { interrupted: outcome.interrupted } : {}),
    },
    outcome.at,
  );
}

/** The file_change events of a tool call's outcome, in the order the handler reported the changes. */
export function fileChangeEvents(
  run: Pick<RunRecord, 'id' | 'agent'>,
  iteration: number,
  call: Pick<ToolCallPart, 'id' | 'name'>,
  files: FileChanges | undefined,
  now: string,
): StoredEvent[] {
  if (!files) return [];
  return files.changes.map((file, index) =>
    buildEvent(
      'file_change',
      run,
      {
        iteration,
        tool_call_id: call.id,
        name: call.name,
        path: file.path,
        change: file.change,
        size: file.size,
        size_before: file.sizeBefore,
        ...(file.lines ? { lines_added: file.lines.added, lines_removed: file.lines.removed } : {}),
        ...(files.more > 0 && index === files.changes.length - 1 ? { more_changes: files.more } : {}),
      },
      now,
    ),
  );
}

/**
 * A compaction: the chat's new context view (written beside the chat by the same commit), its `compaction`
 * event, and the summary request's usage and cost added to the run's. The journal records the view, so a
 * step that runs again finds what the summary said, with that usage and cost, so the timeline can show them.
 */
export function compactionCommit(input: {
  run: RunRecord;
  view: ContextView;
  event: { kind: 'compaction'; data: EventData<'compaction'> };
  usage: Usage;
  costUsd: number;
  now: string;
}): CommitPlan<CompactionEntry> {
  const { run, now } = input;
  return {
    journal: { ...input.view, usage: input.usage, cost_usd: input.costUsd },
    record: {
      ...run,
      usage: addUsage(run.usage, input.usage),
      cost_usd: run.cost_usd + input.costUsd,
      updated_at: now,
    },
    messages: [],
    events: [buildEvent('compaction', run, input.event.data, now)],
    finished: false,
    usage: { ...input.usage, cost_usd: input.costUsd },
  };
}
