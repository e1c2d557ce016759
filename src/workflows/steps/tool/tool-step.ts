import { RatchetError } from '../../../errors/index.js';
import { lazyChild } from '../../../log/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import {
  fileChangeCollector,
  findTool,
  interruptedPolicyOf,
  prepareToolCall,
  runToolHandler,
  type ToolContext,
} from '../../../tools/index.js';
import { decideToolStart, outcomeUnknownMessage } from '../../core/tool-ledger.js';
import { crashPoint } from '../../crash-points.js';
import { type ToolJobData, toolJobDataSchema } from '../../job-data.js';
import { toolIntentSchema } from '../../journal.js';
import type { ApprovalAnswer } from '../../question-record.js';
import { isFinished } from '../../run-record.js';
import { runAgent } from '../runner/agent-runtime.js';
import { commit, done, isPark, type StepAction } from '../runner/step-action.js';
import type { BeginToolCallResult } from '../runner/step-commit.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import { defineStepKind, type StepKind } from '../runner/step-kind.js';
import { repeatCauseOf } from '../runner/step-observer.js';
import { delegateFunction } from './delegation.js';
import { callOf, idempotencyKey, loadCall, parkedBefore } from './tool-call-load.js';
import { hasToolMiddleware, type ToolCallResult, toolCallThroughMiddleware } from './tool-call-middleware.js';
import { approvalOf, askFunction, parkOf } from './tool-interaction.js';
import { beganIfObserved, commitOutcome, continueAfterTools } from './tool-outcome.js';
import { progressFunction } from './tool-progress.js';
import { sessionAccess } from './tool-session.js';

/**
 * One tool call: the intent (recorded with the call's state in one round trip), the handler, the outcome.
 * Errors of the call become error results; a call cut short by a crash follows the tool's policy.
 */
async function execute(context: StepContext, data: ToolJobData): Promise<StepAction> {
  const { services } = context;
  const agent = runAgent(services, data.agent, data.lineage, data.group, data.definition, data.inherited);
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
        intent: { v: 1, token: context.lockToken, idempotency_key: idempotencyKey(data), at: now },
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
  const decision = decideToolStart(intent, undefined, interruptedPolicyOf(prepared.tool), context.lockToken);
  if (decision.kind === 'outcome_unknown') {
    const content = outcomeUnknownMessage(prepared.tool.name);
    const outcome = { content, isError: true, interrupted: 'outcome_unknown' as const };
    return commitOutcome(context, data, call, outcome, false, {}, beganIfObserved(context, beganAtMs, true));
  }
  if (decision.kind === 'reuse') return continueAfterTools(context, data);
  // Another attempt's intent: a crash cut it short, unless that attempt was parked waiting for an answer.
  const interrupted =
    decision.kind === 'rerun' &&
    decision.intent.token !== context.lockToken &&
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
    ? toolCallThroughMiddleware(
        agent,
        data,
        call,
        intent?.at ?? now,
        { signal: context.signal, logger: handlerContext.logger },
        (chosen, input, signal) =>
          runToolHandler(
            chosen,
            input,
            signal === context.signal ? handlerContext : withSignal(handlerContext, signal),
          ),
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

/**
 * The handler's context with another signal (a middleware's time limit with the step's): the same object
 * underneath, so what is built on first use (its memory) is not built by copying it.
 */
function withSignal(context: ToolContext, signal: AbortSignal): ToolContext {
  return Object.create(context, { signal: { value: signal, enumerable: true } }) as ToolContext;
}
