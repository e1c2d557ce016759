import { decodeChatEntries, decodeChatEntry, type Message } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import { buildEvent } from '../../events/event.js';
import { costOf } from '../../models/pricing.js';
import { zeroUsage } from '../../models/usage.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import { budgetExceeded } from '../core/budget.js';
import { checkedFinalAnswer } from '../core/contracts.js';
import type { ContextView } from '../core/effects/index.js';
import {
  isContextLengthError,
  type ModelCallInput,
  type ModelCallPlan,
  planAfterContextError,
} from '../core/effects/index.js';
import { handoffState } from '../core/handoff.js';
import { assignToolCallIds, decideReply, type ReplyDecision } from '../core/reply-decision.js';
import { replyCommit, resultsCommit, toolResultMessage } from '../core/run-commits.js';
import {
  allCompleted,
  autoCompleteAnswer,
  goalsAfterReply,
  goalsAfterResults,
  goalsProgress,
  partialAnswer,
  previousCallsAndResults,
  type SupervisorLimits,
  unfinishedReason,
} from '../core/supervisor.js';
import { crashPoint } from '../crash-points.js';
import { messageId } from '../ids.js';
import { type IterationJobData, iterationJobDataSchema, toolJobsOf } from '../job-data.js';
import { journalField, type ReplyEntry, replyEntrySchema } from '../journal.js';
import { isFinished, type RunRecord, type StoredRun, type SubGoal } from '../run-record.js';
import { runAgent } from './agent-runtime.js';
import { extendChat, knownChatLength } from './chat-cache.js';
import { compositeReply, type ReplyOfTurn } from './composite-member.js';
import {
  type CompactionDecision,
  compact,
  decodeView,
  planRequest,
  previousRequestOf,
  runStartOf,
} from './context-effects.js';
import { callModel, estimateInputTokens, requestContext } from './model-call.js';
import { commit, done, enqueue, isPark, type StepAction, wakeParent } from './step-action.js';
import type { AgentRuntime, StepContext } from './step-context.js';
import { defineStepKind, type StepKind } from './step-kind.js';
import { logRunStart } from './step-runner.js';
import { streamTextDeltas } from './text-deltas.js';
import { raiseBudget } from './tool-interaction.js';

interface LoadedIteration {
  run: StoredRun | undefined;
  reply: ReplyEntry | undefined;
  /** The previous iteration's reply entry, parsed only by the fallback that needs it. */
  previousReply: string | null;
  resultsDone: boolean;
  /** Model calls started for this iteration by earlier executions. */
  modelCalls: number;
  /** Chat entries of the previous iteration's results still waiting in the journal (fallback only). */
  pendingResults: (string | null)[];
  chat: Message[];
  /** The chat's context view: what the model is sent of it. */
  view: ContextView;
}

/** One round trip: the run, the journal fields this iteration needs, and the chat. */
async function loadIteration(context: StepContext, data: IterationJobData): Promise<LoadedIteration> {
  const chat = context.write.chatKey;
  const n = data.iteration;
  const fields = [
    journalField.reply(n),
    journalField.reply(n - 1),
    journalField.results(n - 1),
    journalField.modelCalls(n),
  ];
  for (let index = 0; index < data.previous_calls; index += 1)
    fields.push(journalField.toolEntry(n - 1, index));
  const from = knownChatLength(chat);
  const { run, journal, entries, chatLength, view } = await context.store.loadIteration(from, fields);
  const [reply, previousReply, results, modelCalls, ...pendingResults] = journal;
  const where = (field: string | undefined) => `journal ${field} of ${data.run_id}`;
  return {
    run,
    reply: reply ? parseJsonRecord(replyEntrySchema, reply, where(fields[0])) : undefined,
    previousReply: previousReply ?? null,
    resultsDone: results !== null && results !== undefined,
    modelCalls: Number(modelCalls ?? 0),
    pendingResults,
    chat: run ? await chatOf(context, chat, from, entries, chatLength) : [],
    view: decodeView(view, `the context view of ${chat}`),
  };
}

/** The whole chat: what this process holds of it, and the entries read after that. */
async function chatOf(
  context: StepContext,
  chat: string,
  from: number,
  entries: readonly string[],
  length: number,
): Promise<Message[]> {
  const extended = extendChat(chat, from, decodeChatEntries(entries, chat, from), length);
  if (extended) return extended;
  // What this process held does not fit the chat any more: read it whole.
  const whole = await context.store.readChat();
  return extendChat(chat, 0, whole, whole.length) ?? whole;
}

function systemMessage(agent: AgentRuntime, runId: string, createdAt: string): Message[] {
  if (agent.instructions.trim() === '') return [];
  return [
    {
      id: `${runId}-system`,
      sender: 'system',
      role: 'system',
      parts: [{ type: 'text', text: agent.instructions }],
      metadata: {},
      created_at: createdAt,
    },
  ];
}

/**
 * The results of the previous iteration's calls, when no outcome commit appended them (a tool job was lost
 * without recording anything and the run was driven on): what is there, and an error result for what is not.
 */
function fallbackResults(data: IterationJobData, loaded: LoadedIteration, now: string): Message[] {
  const previous = loaded.previousReply
    ? parseJsonRecord(
        replyEntrySchema,
        loaded.previousReply,
        `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`,
      )
    : undefined;
  if (!previous) {
    throw new RatchetError(
      'record_invalid',
      `iteration ${data.iteration - 1} of ${data.run_id} has no recorded reply`,
    );
  }
  return previous.tool_calls.map((call, index) => {
    const entry = loaded.pendingResults[index];
    if (entry) return decodeChatEntry(entry, `pending result ${index} of ${data.run_id}`);
    return toolResultMessage({
      runId: data.run_id,
      iteration: data.iteration - 1,
      index,
      call,
      content: `the call of tool "${call.name}" could not be completed (its job ended without an outcome)`,
      isError: true,
      now,
    });
  });
}

type Stored = { record: RunRecord; rev: number };

/** An iteration about to ask its agent for a reply: the step, what it loaded, the run, the chat, the agent. */
interface Turn {
  context: StepContext;
  data: IterationJobData;
  loaded: LoadedIteration;
  stored: Stored;
  chat: Message[];
  agent: AgentRuntime;
}

/** An iteration's model request in the making: the step, the agent that makes it, and what it is planned from. */
interface RequestState {
  context: StepContext;
  data: IterationJobData;
  loaded: LoadedIteration;
  agent: AgentRuntime;
  stored: Stored;
  input: ModelCallInput;
}

/**
 * One ReAct iteration: append the previous iteration's tool results (in call order), call the model once,
 * record its reply, and add what comes next. Each part is journaled, so running it again does nothing twice;
 * the commits and the adding are the runner's (step-runner.ts), on what this step decides.
 */
async function execute(context: StepContext, data: IterationJobData): Promise<StepAction> {
  const { services } = context;
  const n = data.iteration;
  const loaded = await loadIteration(context, data);
  if (!loaded.run) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return done;
  }
  const stored: Stored = loaded.run;
  const { record } = stored;
  // A later iteration already committed, or the run is over: this is a stale retry. A finished child run
  // wakes its parent again, in case a crash came between its last commit and the wake-up.
  if (isFinished(record.status)) return wakeParent(record);
  if (record.iteration > n) return done;
  logRunStart(context, record);
  if (data.previous_calls === 0 || loaded.resultsDone)
    return replyOf(context, data, loaded, stored, loaded.chat);

  const now = services.now().toISOString();
  const plan = resultsCommit({
    run: record,
    messages: fallbackResults(data, loaded, now),
    chatLength: loaded.chat.length,
    now,
  });
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.results(n - 1),
        plan,
        expectedChatLength: loaded.chat.length,
      },
    },
    {
      what: 'appending tool results',
      before: 'iteration.before_results_commit',
      after: 'iteration.after_results_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status !== 'ok')
          throw new RatchetError('internal', `appending tool results: ${JSON.stringify(result)}`);
        return replyOf(context, data, loaded, stored, [...loaded.chat, ...plan.messages]);
      },
    },
  );
}

/** The iteration's reply: as recorded by an earlier execution, or made now (by a model or a child run). */
async function replyOf(
  context: StepContext,
  data: IterationJobData,
  loaded: LoadedIteration,
  stored: Stored,
  chat: Message[],
): Promise<StepAction> {
  const { services } = context;
  const { record } = stored;
  if (loaded.reply) {
    // Who made the reply: the run's agent, or the member of a handoff group in control then.
    const sender = chat[loaded.reply.index]?.sender ?? record.agent;
    return afterReply(context, data, record, loaded.reply, sender);
  }
  const group = services.handoffs.get(record.agent);
  const member = group ? handoffState(chat, record.id, group.members).active : record.agent;
  if (group && !services.agents.has(member)) {
    // A team or group in control of a handoff group answers as one member: a child run of its own.
    const reply = await compositeReply(context, record, member, chat);
    if (isPark(reply)) return reply;
    return commitReply(context, data, loaded, stored, chat, member, reply);
  }
  const agent = runAgent(services, member, record.lineage, group?.name);
  if (agent.supervisor && record.sub_goals) {
    const turn: Turn = { context, data, loaded, stored, chat, agent };
    const moved = movedGoals(record, chat, data.iteration);
    if (moved) return commitMovedGoals(turn, moved);
    // Its own update_sub_goal completed the last one.
    if (allCompleted(record.sub_goals) && !agent.outputSchema) return finishSupervisor(turn, false);
  }
  return requestOf({ context, data, loaded, stored, chat, agent });
}

/** The sub-goals the results of the previous iteration's delegations moved, or undefined when none moved. */
function movedGoals(record: RunRecord, chat: readonly Message[], iteration: number): SubGoal[] | undefined {
  if (!record.sub_goals) return undefined;
  const { calls, results } = previousCallsAndResults(chat, messageId.reply(record.id, iteration - 1));
  const moved = goalsAfterResults(record.sub_goals, calls, results);
  return moved.changed ? moved.goals : undefined;
}

/**
 * A supervisor's sub-goals moved by its delegations' results: when all are completed, the run finishes with
 * their summary and no model call; otherwise the move is recorded (with its progress event) once, before the
 * model is asked what next.
 */
function commitMovedGoals(turn: Turn, goals: SubGoal[]): StepAction {
  const { context, data, stored } = turn;
  const now = context.services.now().toISOString();
  const record: RunRecord = { ...stored.record, sub_goals: goals, updated_at: now };
  // A summary of its own is no structured answer: a supervisor with an output_schema is asked for one.
  if (allCompleted(goals) && !turn.agent.outputSchema)
    return finishSupervisor({ ...turn, stored: { record, rev: stored.rev } }, true);
  crashPoint('iteration.before_goals_commit');
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.subGoals(data.iteration),
        expectedRev: stored.rev,
        plan: {
          journal: { v: 1, at: now },
          record,
          messages: [],
          events: [buildEvent('progress', record, goalsProgress(goals), now)],
          finished: false,
        },
      },
    },
    {
      what: 'moving sub-goals',
      after: 'iteration.after_goals_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status === 'ok') return requestOf({ ...turn, stored: { record, rev: stored.rev + 1 } });
        // Moved by an earlier attempt, or the run moved on: read it again on the next attempt.
        throw new RatchetError(
          'internal',
          `moving the sub-goals of ${data.run_id}: ${JSON.stringify(result)}`,
          {
            retryable: true,
          },
        );
      },
    },
  );
}

/** Every sub-goal is completed: the run finishes with their summary, and no model call. */
function finishSupervisor(turn: Turn, goalsMoved: boolean): StepAction {
  const { context, data, loaded, stored, chat, agent } = turn;
  return commitReply(context, data, loaded, stored, chat, agent.name, {
    parts: [{ type: 'text', text: autoCompleteAnswer(stored.record.sub_goals ?? []) }],
    usage: { ...zeroUsage },
    costUsd: 0,
    maxIterations: Number.POSITIVE_INFINITY,
    ...(agent.supervisor ? { supervisor: agent.supervisor } : {}),
    goalsMoved,
    noModelCall: true,
  });
}

/** The iteration's model request, planned from the chat and the agent's effects. */
function requestOf(turn: Turn): Promise<StepAction> {
  const { context, data, loaded, stored, chat, agent } = turn;
  const { services } = context;
  const { record } = stored;
  const input: ModelCallInput = {
    runId: record.id,
    agent: agent.name,
    iteration: data.iteration,
    now: services.now().toISOString(),
    system: systemMessage(agent, record.id, record.created_at),
    chat,
    // A retry or a fork has no input of its own (a fork may): its part of the chat starts at the input of
    // the run it continues.
    runStart: runStartOf(chat, record.origin?.input_run_id ?? record.id),
    view: loaded.view,
    contextWindow: agent.provider.contextWindow,
    previous: previousRequestOf(
      loaded.previousReply,
      `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`,
    ),
    effects: agent.effects,
  };
  return sendRequest({ context, data, loaded, agent, stored, input });
}

/**
 * The request the agent's effects plan (a compaction first when one is due), within the budget, then the
 * model call. Called again with the new view after each compaction.
 */
async function sendRequest(request: RequestState): Promise<StepAction> {
  const { context, data, agent, stored, input } = request;
  const { services } = context;
  const { record } = stored;
  const plan = planRequest(input);
  if (plan.kind === 'compact') return compactThenSend(request, plan);
  crashPoint('iteration.before_model_call');
  const exceeded = await budgetCheck(context, agent, record, plan.messages);
  if (!exceeded) return modelReply(request, plan);
  const raised = exceeded.ask && (await raiseBudget(context, data, exceeded.message, record.budget_raises));
  if (isPark(raised)) return raised;
  if (!raised) throw new RatchetError('budget_exceeded', exceeded.message);
  // The user raised the budget: recorded once per question (a retried step finds it done).
  const now = services.now().toISOString();
  const raisedRecord: RunRecord = { ...record, budget_raises: record.budget_raises + 1, updated_at: now };
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.budgetRaise(record.budget_raises),
        expectedRev: stored.rev,
        plan: { journal: { v: 1, at: now }, record: raisedRecord, messages: [], events: [], finished: false },
      },
    },
    {
      what: 'raising the budget',
      andThen: (result) => {
        if (result.status === 'ok') {
          const after = { record: raisedRecord, rev: stored.rev + 1 };
          return modelReply({ ...request, stored: after }, plan);
        }
        // Raised by an earlier attempt, or the run moved on: read it again on the next attempt.
        throw new RatchetError(
          'internal',
          `raising the budget of ${data.run_id}: ${JSON.stringify(result)}`,
          {
            retryable: true,
          },
        );
      },
    },
  );
}

/** Whether the next request would go over the run's or the agent's budget (which the user may raise). */
async function budgetCheck(
  context: StepContext,
  agent: AgentRuntime,
  record: RunRecord,
  messages: readonly Message[],
): Promise<ReturnType<typeof budgetExceeded>> {
  if (!record.budget && !agent.budget) return undefined;
  const nextTokens = estimateInputTokens(messages);
  const tree = record.budget ? await context.store.treeUsage(record) : undefined;
  return budgetExceeded({
    raises: record.budget_raises,
    usedTokens: record.usage.input_tokens + record.usage.output_tokens,
    usedCostUsd: record.cost_usd,
    ...(tree ? { tree } : {}),
    nextTokens,
    nextCostUsd: costOf(
      { input_tokens: nextTokens, output_tokens: 0, cached_input_tokens: 0, requests: 1 },
      agent.provider.price,
    ),
    runBudget: record.budget,
    agentBudget: agent.budget,
  });
}

/** A compaction, then the request planned again from the new view. */
function compactThenSend(request: RequestState, decision: CompactionDecision): Promise<StepAction> {
  const { context, data, agent, stored, input } = request;
  return compact(context, data, agent, stored, input, decision, (after, view) =>
    sendRequest({ ...request, stored: after, input: { ...input, view } }),
  );
}

/**
 * The iteration's model request, then its commit. A provider that refuses the request as longer than its
 * context window gets a compaction of everything not yet summarised and the request again (reactive
 * compaction); when nothing is left to summarise, the run fails with context_exceeded.
 */
async function modelReply(
  request: RequestState,
  plan: Extract<ModelCallPlan, { kind: 'send' }>,
): Promise<StepAction> {
  const { context, data, loaded, agent, stored, input } = request;
  const n = data.iteration;
  const deltas = agent.stream
    ? streamTextDeltas(context, {
        sessionId: data.session_id,
        runId: data.run_id,
        agent: agent.name,
        iteration: n,
      })
    : undefined;
  const completion = await callModel(
    context,
    agent,
    {
      messages: plan.messages,
      tools: agent.tools,
      // An agent with an output_schema asks for structured output (where its provider supports it).
      options: agent.outputSchema
        ? { responseFormat: { type: 'json', schema: { ...agent.outputSchema }, name: 'answer' } }
        : {},
      context: requestContext(context, data, agent.name),
      ...(deltas ? { onTextDelta: deltas.onTextDelta } : {}),
    },
    journalField.modelCalls(n),
    stored.record,
    'chat',
  ).catch((error: unknown) => {
    if (!isContextLengthError(error)) throw error;
    return planAfterContextError(input);
  });
  if (isPark(completion)) return completion;
  if ('kind' in completion) {
    if (completion.kind === 'fail') throw new RatchetError(completion.code, completion.message);
    context.logger.warn(
      { tokens: completion.tokens },
      'the provider refused the request as too long: compacting',
    );
    return compactThenSend(request, completion);
  }
  await deltas?.flush();
  crashPoint('iteration.after_model_call');
  return commitReply(context, data, loaded, stored, input.chat, agent.name, {
    parts: completion.parts,
    usage: completion.usage,
    costUsd: costOf(completion.usage, agent.provider.price),
    // A run may have asked for fewer iterations than its agent allows (POST /v1/runs max_iterations).
    maxIterations: Math.min(agent.maxIterations, stored.record.max_iterations ?? Number.POSITIVE_INFINITY),
    guard: agent.outputGuard,
    model: { provider: agent.provider.name, model: agent.provider.model },
    ...(agent.supervisor ? { supervisor: agent.supervisor } : {}),
    effects: {
      inject: plan.inject,
      events: plan.events,
      context: {
        tokens: plan.tokens,
        sent_estimate: plan.sent_estimate,
        input_tokens: completion.usage.input_tokens,
        applied: plan.applied,
        summary_up_to: input.view.summary?.up_to ?? null,
      },
    },
  });
}

/** Records the reply (once: an earlier attempt's record wins), then what it asks for comes next. */
function commitReply(
  context: StepContext,
  data: IterationJobData,
  loaded: LoadedIteration,
  stored: Stored,
  chat: readonly Message[],
  member: string,
  reply: ReplyOfTurn,
): StepAction {
  const { services } = context;
  const n = data.iteration;
  const { record } = stored;
  const parts = assignToolCallIds(reply.parts, n);
  const decided = decideReply(
    parts,
    n,
    reply.maxIterations,
    reply.guard ? { ...reply.guard, retriesSoFar: record.guardrail_retries } : undefined,
  );
  const supervised = reply.supervisor
    ? supervisedDecision(record, decided, reply.supervisor, reply.goalsMoved === true)
    : undefined;
  const now = services.now().toISOString();
  const decision = supervised?.decision ?? decided;
  const plan = replyCommit({
    run: record,
    sender: member,
    iteration: n,
    parts,
    usage: reply.usage,
    costUsd: reply.costUsd,
    // The finishing reply of a supervisor made no model call: none of this iteration's was wasted.
    wastedCalls: reply.noModelCall ? 0 : loaded.modelCalls,
    decision:
      decision.kind === 'final' ? checkedFinalAnswer(services.contracts, record, decision, now) : decision,
    chatLength: chat.length,
    now,
    ...(reply.model ? { model: reply.model } : {}),
    ...(reply.effects ? { effects: reply.effects } : {}),
    ...(supervised ? { supervisor: supervised.supervisor } : {}),
  });
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.reply(n),
        plan,
        ...(services.agents.has(member) ? { agentUsageKey: context.store.agentUsageKey(member) } : {}),
        treeUsageKey: context.store.treeUsageKey(record),
        expectedRev: stored.rev,
        expectedChatLength: chat.length,
      },
    },
    {
      what: 'recording the model reply',
      after: 'iteration.after_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        let entry: ReplyEntry;
        if (result.status === 'ok') entry = plan.journal;
        else if (result.status === 'done')
          entry = parseJsonRecord(replyEntrySchema, result.value, `journal reply:${n}`);
        else throw new RatchetError('internal', `recording the model reply: ${JSON.stringify(result)}`);
        context.logger.info(
          { decision: entry.decision, tool_calls: entry.tool_calls.length },
          'iteration committed',
        );
        return afterReply(context, data, record, entry, member);
      },
    },
  );
}

/**
 * A supervisor's reply: its calls move its sub-goals (a declaration, its own update, a delegation that starts
 * one). A reply that asks for delegations past max_orchestration_steps ends the run with what it has, partial;
 * a final answer with sub-goals not all completed is partial too.
 */
function supervisedDecision(
  record: RunRecord,
  decision: ReplyDecision,
  limits: SupervisorLimits,
  goalsMoved: boolean,
): { decision: ReplyDecision; supervisor: NonNullable<Parameters<typeof replyCommit>[0]['supervisor']> } {
  const after = goalsAfterReply(record.sub_goals, decision.kind === 'tools' ? decision.calls : [], limits);
  const steps = record.orchestration_steps + after.delegations;
  if (decision.kind === 'tools' && steps > limits.maxOrchestrationSteps) {
    const reason =
      `max_orchestration_steps (${limits.maxOrchestrationSteps}) reached: ${record.orchestration_steps} ` +
      `delegation(s) made and the reply asked for ${after.delegations} more`;
    return {
      decision: { kind: 'final', result: partialAnswer(record.sub_goals, reason), partial: { reason } },
      supervisor: {
        goals: record.sub_goals,
        orchestrationSteps: record.orchestration_steps,
        progress: goalsMoved && record.sub_goals ? goalsProgress(record.sub_goals) : undefined,
      },
    };
  }
  const unfinished = decision.kind === 'final' ? unfinishedReason(after.goals) : undefined;
  const changed = (after.changed || goalsMoved) && after.goals !== null;
  return {
    decision:
      decision.kind === 'final' && unfinished && !decision.partial
        ? { ...decision, partial: { reason: unfinished } }
        : decision,
    supervisor: {
      goals: after.goals,
      orchestrationSteps: steps,
      progress:
        changed && after.goals
          ? goalsProgress(after.goals, after.warnings.length > 0 ? after.warnings.join('; ') : undefined)
          : undefined,
    },
  };
}

/** What a recorded reply asks for: its tool calls, or (a final answer) the parent run's wake-up. */
function afterReply(
  context: StepContext,
  data: IterationJobData,
  record: RunRecord,
  entry: ReplyEntry,
  sender: string,
): StepAction {
  if (entry.decision === 'retry') {
    // The answer was sent back (the feedback is in the chat): the next iteration answers again.
    return enqueue(
      [{ kind: 'iteration', data: { ...data, iteration: data.iteration + 1, previous_calls: 0 } }],
      {
        after: 'iteration.after_enqueue',
      },
    );
  }
  if (entry.decision !== 'tools') return wakeParent(record);
  const place = {
    session_id: data.session_id,
    run_id: data.run_id,
    // A handoff group's member in control made the calls: its tools run them.
    agent: sender,
    ...(context.services.handoffs.has(record.agent) ? { group: record.agent } : {}),
    chat_id: record.chat_id,
    lineage: record.lineage,
    ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
    ...(record.root_run_id ? { root_run_id: record.root_run_id } : {}),
  };
  return enqueue(
    [
      {
        kind: 'tools',
        calls: toolJobsOf(
          place,
          data.iteration,
          entry.index,
          entry.tool_calls.map((call) => call.name),
        ),
      },
    ],
    { after: 'iteration.after_enqueue' },
  );
}

export const iterationStep: StepKind<IterationJobData> = defineStepKind({
  name: 'iteration',
  dataSchema: iterationJobDataSchema,
  describe: (data) => ({ agent: data.agent, iteration: data.iteration }),
  label: (data) => `iteration ${data.iteration}`,
  run: execute,
});
