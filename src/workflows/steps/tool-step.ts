import { decodeChatEntry, type ToolCallPart, toolCallPartSchema, toolCallsOf } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import { lazyChild } from '../../log/index.js';
import type { BeginToolCallResult } from '../../redis/run-store.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import {
  type FileChanges,
  fileChangeCollector,
  findTool,
  interruptedPolicyOf,
  prepareToolCall,
  runToolHandler,
  type ToolOutcome,
  type ToolContext,
} from '../../tools/index.js';
import {
  fileChangeEvents,
  messageAddedEvent,
  toolEndEvent,
  toolResultMessage,
  toolStartEvent,
} from '../core/run-commits.js';
import { decideToolStart, outcomeUnknownMessage } from '../core/tool-ledger.js';
import { type CrashPointName, crashPoint } from '../crash-points.js';
import { stepJobId } from '../ids.js';
import { iterationAfterTools, type ToolJobData, toolJobDataSchema } from '../job-data.js';
import {
  journalField,
  type ToolIntent,
  type ToolOutcomeEntry,
  toolIntentSchema,
  toolOutcomeSchema,
} from '../journal.js';
import type { ApprovalAnswer } from '../question-record.js';
import { isFinished, type RunRecord } from '../run-record.js';
import { runAgent } from './agent-runtime.js';
import { delegateFunction } from './delegation.js';
import { commit, done, enqueue, isPark, type StepAction } from './step-action.js';
import type { AgentRuntime, StepContext } from './step-context.js';
import { defineStepKind, type StepKind } from './step-kind.js';
import { type RepeatCause, repeatCauseOf, type ToolCallReport } from './step-observer.js';
import { approvalOf, askFunction, parkOf, progressFunction } from './tool-interaction.js';
import { hasToolMiddleware, type ToolCallResult, toolCallThroughMiddleware } from './tool-call-middleware.js';
import { sessionAccess } from './tool-session.js';

interface LoadedCall {
  record: RunRecord;
  call: ToolCallPart;
  intent: ToolIntent | undefined;
  outcome: ToolOutcomeEntry | undefined;
}

/** For the failure path: the run, the call (from the recorded reply in the chat) and its ledger entries. */
async function loadCall(context: StepContext, data: ToolJobData): Promise<LoadedCall | undefined> {
  const chat = context.write.chatKey;
  const intentField = journalField.toolIntent(data.iteration, data.index);
  const outcomeField = journalField.toolOutcome(data.iteration, data.index);
  const loaded = await context.store.loadWithChatEntry([intentField, outcomeField], data.reply_index);
  if (!loaded.run) return undefined;
  const run = loaded.run.record;
  const replyText = loaded.entry;
  const ledger = loaded.journal;
  if (!replyText)
    throw new RatchetError('record_invalid', `chat entry ${data.reply_index} of ${chat} is missing`);
  const call = toolCallsOf(decodeChatEntry(replyText, `chat entry ${data.reply_index} of ${chat}`))[
    data.index
  ];
  if (!call)
    throw new RatchetError('record_invalid', `chat entry ${data.reply_index} has no tool call ${data.index}`);
  const [intentText, outcomeText] = ledger;
  return {
    record: run,
    call,
    intent: intentText ? parseJsonRecord(toolIntentSchema, intentText, intentField) : undefined,
    outcome: outcomeText ? parseJsonRecord(toolOutcomeSchema, outcomeText, outcomeField) : undefined,
  };
}

/** When a call began (its intent's time), whether this execution ran it again, and whether its tool exists. */
interface Began {
  atMs: number;
  repeat?: RepeatCause | undefined;
  known: boolean;
}

/** A call's Began for its report, or nothing when telemetry is off (nothing built on a step's hot path). */
function beganIfObserved(
  context: StepContext,
  atMs: number,
  known: boolean,
  repeat?: RepeatCause,
): Began | undefined {
  return context.services.observer ? { atMs, known, repeat } : undefined;
}

/** Records the call's outcome (and its start event when the call never started); then what comes next. */
function commitOutcome(
  context: StepContext,
  data: ToolJobData,
  call: ToolCallPart,
  outcome: ToolCallResult & { interrupted?: ToolOutcomeEntry['interrupted']; fileChanges?: FileChanges },
  withStartEvent: boolean,
  crash: { before?: CrashPointName; after?: CrashPointName } = {},
  /** When the call began (its intent, for a call that waited) and whether this execution ran it again. */
  /** Built only when telemetry is on (see beganIfObserved). */
  began?: Began,
): StepAction {
  const now = context.services.now().toISOString();
  const run = { id: data.run_id, agent: data.agent, chat_id: data.chat_id };
  const entry: ToolOutcomeEntry = {
    v: 1,
    is_error: outcome.isError,
    ...(outcome.interrupted ? { interrupted: outcome.interrupted } : {}),
    at: now,
    ...(outcome.middleware ? { middleware: outcome.middleware } : {}),
  };
  const message = toolResultMessage({
    runId: data.run_id,
    iteration: data.iteration,
    index: data.index,
    call,
    content: outcome.content,
    isError: outcome.isError,
    images: outcome.images,
    now,
  });
  const events = [
    ...fileChangeEvents(run, data.iteration, call, outcome.fileChanges, now),
    toolEndEvent(run, data.iteration, call, entry, outcome.content),
  ];
  if (withStartEvent) events.unshift(toolStartEvent(run, data.iteration, call, now));
  return commit(
    {
      op: 'tool_outcome',
      request: {
        iteration: data.iteration,
        index: data.index,
        calls: data.calls,
        replyIndex: data.reply_index,
        outcome: entry,
        message,
        messageAdded: messageAddedEvent(run, message, data.reply_index + 1 + data.index, now),
        events,
      },
    },
    {
      what: `recording the outcome of ${call.name}`,
      ...crash,
      andThen: (result) => {
        // Reported once: by the execution whose commit recorded the outcome.
        if (result.status === 'ok')
          context.services.observer?.toolCall(
            toolReport(data, call, outcome, began ?? { atMs: Date.now(), known: false }),
          );
        if (result.status === 'ok' && result.completedBatch) return nextIteration(data);
        if (result.status === 'done') return continueAfterTools(context, data);
        return done;
      },
    },
  );
}

function toolReport(
  data: ToolJobData,
  call: ToolCallPart,
  outcome: ToolOutcome,
  began: Began,
): ToolCallReport {
  return {
    run: { id: data.run_id, root_run_id: data.root_run_id ?? null, session_id: data.session_id },
    agent: data.agent,
    jobId: stepJobId.tool(data.run_id, data.iteration, data.index),
    iteration: data.iteration,
    toolName: call.name,
    toolKnown: began.known,
    toolCallId: call.id,
    startMs: began.atMs,
    endMs: Date.now(),
    isError: outcome.isError,
    repeat: began.repeat,
    arguments: call.arguments,
    result: outcome.content,
  };
}

/** The batch is complete: the next iteration (adding is idempotent: the job id is fixed). */
function nextIteration(data: ToolJobData): StepAction {
  return enqueue([{ kind: 'iteration', data: iterationAfterTools(data) }], {
    before: 'tool.before_next_iteration',
  });
}

/**
 * This call's outcome was recorded by an earlier attempt, which may have died before adding the next
 * iteration: add it when the batch is complete.
 */
async function continueAfterTools(context: StepContext, data: ToolJobData): Promise<StepAction> {
  const fields = [journalField.results(data.iteration)];
  for (let index = 0; index < data.calls; index += 1)
    fields.push(journalField.toolOutcome(data.iteration, index));
  const [results, ...outcomes] = await context.store.journalFields(fields);
  return results || outcomes.every((outcome) => outcome !== null) ? nextIteration(data) : done;
}

/** The same on every attempt of the call: derived from the run, the iteration and the call's position. */
function idempotencyKey(data: ToolJobData): string {
  return stepJobId.tool(data.run_id, data.iteration, data.index);
}

/**
 * The call's handler asked a question, started child runs or parked itself (state_watch) before: an earlier
 * attempt was parked, not cut short.
 */
async function parkedBefore(context: StepContext): Promise<boolean> {
  return context.store.hasJournalField(journalField.parked(context.jobId));
}

/** The call as begin-tool-call read it from the recorded reply (one part, not the whole message). */
function callOf(data: ToolJobData, call: string): ToolCallPart {
  return parseJsonRecord(
    toolCallPartSchema,
    call,
    `tool call ${data.index} of chat entry ${data.reply_index} of ${data.run_id}`,
  );
}

/**
 * One tool call: the intent (recorded with the call's state in one round trip), the handler, the outcome.
 * Errors of the call become error results; a call cut short by a crash follows the tool's policy.
 */
async function execute(context: StepContext, data: ToolJobData): Promise<StepAction> {
  const { services } = context;
  const agent = runAgent(services, data.agent, data.lineage, data.group);
  // A call that needs approval waits for it before anything is recorded: no intent, no start event yet.
  let approved: ApprovalAnswer | undefined;
  if (agent.approvalTools.has(data.tool_name)) {
    const loaded = await loadCall(context, data);
    if (!loaded || isFinished(loaded.record.status)) return done;
    if (loaded.outcome) return continueAfterTools(context, data);
    const answer = await approvalOf(context, data, loaded.call);
    if (isPark(answer)) return answer;
    approved = answer;
    if (approved.decision === 'reject') {
      const reason = approved.reason ? `: ${approved.reason}` : '';
      const content = `the call of tool "${loaded.call.name}" was rejected by a person${reason}`;
      const began = beganIfObserved(context, Date.now(), true);
      return commitOutcome(context, data, loaded.call, { content, isError: true }, true, {}, began);
    }
  }
  const now = services.now().toISOString();
  return commit(
    {
      op: 'begin_tool',
      request: {
        iteration: data.iteration,
        index: data.index,
        replyIndex: data.reply_index,
        intent: { v: 1, token: context.write.token, idempotency_key: idempotencyKey(data), at: now },
        runId: data.run_id,
        agent: data.agent,
        time: now,
      },
    },
    {
      what: 'beginning the tool call',
      before: 'tool.before_intent',
      andThen: (begun) => callTool(context, data, agent, approved, begun, now),
    },
  );
}

/** The call as the intent's commit found it: run the handler, or act on what an earlier attempt left. */
async function callTool(
  context: StepContext,
  data: ToolJobData,
  agent: AgentRuntime,
  approved: ApprovalAnswer | undefined,
  begun: Exclude<BeginToolCallResult, { status: 'lock_lost' }>,
  /** The time of the intent this execution recorded. */
  now: string,
): Promise<StepAction> {
  if (begun.status === 'no_run') {
    context.logger.warn('the run of this tool call does not exist: nothing to do');
    return done;
  }
  if (begun.status === 'no_reply') {
    throw new RatchetError(
      'record_invalid',
      `the reply at chat position ${data.reply_index} of ${data.run_id} is missing`,
    );
  }
  if (begun.status === 'done') return continueAfterTools(context, data);
  if (begun.status !== 'started' && begun.status !== 'interrupted') return done;
  const recorded = callOf(data, begun.call);
  // Approved with edited arguments: the call runs with those (the chat keeps what the model asked).
  const call = approved?.arguments
    ? { ...recorded, arguments: JSON.stringify(approved.arguments) }
    : recorded;
  const intent =
    begun.status === 'interrupted'
      ? parseJsonRecord(toolIntentSchema, begun.intent, 'tool intent')
      : undefined;
  const beganAtMs = intent ? Date.parse(intent.at) : context.services.observer ? Date.now() : 0;
  const tool = findTool(agent.toolboxes, call.name);
  const prepared = prepareToolCall(
    call,
    tool,
    agent.tools.map((definition) => definition.name),
  );
  if (!prepared.ok) {
    const began = beganIfObserved(context, beganAtMs, tool !== undefined);
    return commitOutcome(context, data, call, prepared.outcome, false, {}, began);
  }
  const decision = decideToolStart(
    intent,
    undefined,
    interruptedPolicyOf(prepared.tool),
    context.write.token,
  );
  if (decision.kind === 'outcome_unknown') {
    const content = outcomeUnknownMessage(prepared.tool.name);
    const outcome = { content, isError: true, interrupted: 'outcome_unknown' as const };
    return commitOutcome(context, data, call, outcome, false, {}, beganIfObserved(context, beganAtMs, true));
  }
  if (decision.kind === 'reuse') return continueAfterTools(context, data);
  // Another attempt's intent: a crash cut it short, unless that attempt was parked waiting for an answer.
  const interrupted =
    decision.kind === 'rerun' &&
    decision.intent.token !== context.write.token &&
    !(await parkedBefore(context));
  const files = fileChangeCollector();
  const handlerContext: ToolContext = {
    idempotencyKey: decision.kind === 'rerun' ? decision.intent.idempotency_key : idempotencyKey(data),
    signal: context.signal,
    logger: lazyChild(context.logger, () => ({ tool: prepared.tool.name, tool_call_id: call.id })),
    sessionId: data.session_id,
    runId: data.run_id,
    agent: agent.name,
    iteration: data.iteration,
    toolCallId: call.id,
    ask: askFunction(context, data),
    reportProgress: progressFunction(context, data),
    session: sessionAccess(context, data),
    delegate: delegateFunction(context, data),
    chat: () => context.store.readChat(),
    // Stable while the iteration's tools run: only the run's iteration commits move sub-goals.
    subGoals: async () => (await context.store.loadRun())?.record.sub_goals ?? [],
    recordFileChange: files.record,
    // Built on first use: most tools never touch memory.
    get memory() {
      return context.store.memory;
    },
  };
  // Through the agent's middleware when it has some (their decisions go into the outcome's commit).
  const handling = hasToolMiddleware(agent)
    ? toolCallThroughMiddleware(agent, data, call, intent?.at ?? now, (chosen, input) =>
        runToolHandler(chosen, input, handlerContext),
      )
    : runToolHandler(prepared.tool, prepared.input, handlerContext);
  // The handler has started (its synchronous part ran): a crash here leaves an intent without an outcome.
  crashPoint('tool.mid_call');
  let outcome: ToolCallResult;
  try {
    outcome = await handling;
  } catch (thrown) {
    // A handler that waits (ask, delegate, park) was unwound: the step parks.
    return parkOf(thrown);
  }
  const fileChanges = files.collected();
  return commitOutcome(
    context,
    data,
    call,
    {
      ...outcome,
      ...(interrupted ? { interrupted: 'rerun' as const } : {}),
      ...(fileChanges.changes.length > 0 ? { fileChanges } : {}),
    },
    false,
    { before: 'tool.before_commit', after: 'tool.after_commit' },
    beganIfObserved(context, beganAtMs, true, interrupted ? repeatCauseOf(context.attempt) : undefined),
  );
}

/** A tool job that failed for good still gives the model a result, so the run goes on. */
async function fail(context: StepContext, data: ToolJobData, error: RatchetError): Promise<StepAction> {
  const loaded = await loadCall(context, data);
  if (!loaded || isFinished(loaded.record.status)) return done;
  if (loaded.outcome) return continueAfterTools(context, data);
  const content = `the call of tool "${loaded.call.name}" could not be completed: ${error.message}`;
  return commitOutcome(context, data, loaded.call, { content, isError: true }, loaded.intent === undefined);
}

export const toolStep: StepKind<ToolJobData> = defineStepKind({
  name: 'tool',
  dataSchema: toolJobDataSchema,
  describe: (data) => ({ agent: data.agent, iteration: data.iteration, tool_index: data.index }),
  label: (data) => `tool ${data.iteration}.${data.index}`,
  // A tool call that fails for good gets an error result, and the run goes on.
  fail,
  run: execute,
});
