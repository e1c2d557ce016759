import { decodeChatEntry, type Message } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import { costOf } from '../../models/pricing.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import { treeUsageKeyOf, wakeParentStep } from '../child-runs.js';
import { budgetExceeded } from '../core/budget.js';
import { handoffState } from '../core/handoff.js';
import { assignToolCallIds, decideReply } from '../core/reply-decision.js';
import { replyCommit, resultsCommit, toolResultMessage } from '../core/run-commits.js';
import { crashPoint } from '../crash-points.js';
import { type IterationJobData, iterationJobDataSchema, toolJobsOf } from '../job-data.js';
import { journalField, type ReplyEntry, replyEntrySchema } from '../journal.js';
import { isFinished, type RunRecord, type StoredRun } from '../run-record.js';
import { decodeChat } from '../store.js';
import { runAgent } from './agent-runtime.js';
import { extendChat, knownChatLength } from './chat-cache.js';
import { compositeReply, type ReplyOfTurn } from './composite-member.js';
import { callModel, estimateInputTokens } from './model-call.js';
import { ensureOwned } from './run-failures.js';
import type { AgentRuntime, StepContext } from './step-context.js';
import { defineStepKind, type StepKind } from './step-kind.js';
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
  const { run, journal, entries, chatLength } = await context.store.loadIteration(from, fields);
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
  const extended = extendChat(chat, from, decodeChat(entries, chat, from), length);
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

/** Records that the user raised the run's budget (once per question: a retried step finds it done). */
async function commitBudgetRaise(
  context: StepContext,
  data: IterationJobData,
  record: RunRecord,
  rev: number,
): Promise<{ record: RunRecord; rev: number }> {
  const now = context.services.now().toISOString();
  const raised: RunRecord = { ...record, budget_raises: record.budget_raises + 1, updated_at: now };
  const result = await context.store.commit({
    journalField: journalField.budgetRaise(record.budget_raises),
    expectedRev: rev,
    plan: { journal: { v: 1, at: now }, record: raised, messages: [], events: [], finished: false },
  });
  ensureOwned(result, 'raising the budget');
  if (result.status === 'ok') return { record: raised, rev: rev + 1 };
  // Raised by an earlier attempt, or the run moved on: read it again on the next attempt.
  throw new RatchetError('internal', `raising the budget of ${data.run_id}: ${JSON.stringify(result)}`, {
    retryable: true,
  });
}

/** One model request of the iteration, within the run's and the agent's budget (which the user may raise). */
async function modelReply(
  context: StepContext,
  data: IterationJobData,
  agent: AgentRuntime,
  stored: { record: RunRecord; rev: number },
  chat: Message[],
): Promise<{ reply: ReplyOfTurn; record: RunRecord; rev: number }> {
  const n = data.iteration;
  let { record, rev } = stored;
  crashPoint('iteration.before_model_call');
  const messages = [...systemMessage(agent, record.id, record.created_at), ...chat];
  if (record.budget || agent.budget) {
    const nextTokens = estimateInputTokens(messages);
    const tree = record.budget ? await context.store.treeUsage(record) : undefined;
    const exceeded = budgetExceeded({
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
    if (exceeded) {
      const raised =
        exceeded.ask && (await raiseBudget(context, data, exceeded.message, record.budget_raises));
      if (!raised) throw new RatchetError('budget_exceeded', exceeded.message);
      ({ record, rev } = await commitBudgetRaise(context, data, record, rev));
    }
  }
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
      messages,
      tools: agent.tools,
      options: {},
      context: {
        sessionId: data.session_id,
        runId: data.run_id,
        agent: agent.name,
        iteration: n,
        attempt: context.attempt,
      },
      ...(deltas ? { onTextDelta: deltas.onTextDelta } : {}),
    },
    journalField.modelCalls(n),
  );
  await deltas?.flush();
  crashPoint('iteration.after_model_call');
  return {
    reply: {
      parts: completion.parts,
      usage: completion.usage,
      costUsd: costOf(completion.usage, agent.provider.price),
      maxIterations: agent.maxIterations,
    },
    record,
    rev,
  };
}

/**
 * One ReAct iteration: append the previous iteration's tool results (in call order), call the model once,
 * record its reply, and enqueue what comes next. Each part is journaled, so running it again does nothing twice.
 */
async function execute(context: StepContext, data: IterationJobData): Promise<void> {
  const { services } = context;
  const n = data.iteration;
  const loaded = await loadIteration(context, data);
  if (!loaded.run) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return;
  }
  let { record, rev } = loaded.run;
  // A later iteration already committed, or the run is over: this is a stale retry. A finished child run
  // wakes its parent again, in case a crash came between its last commit and the wake-up.
  if (isFinished(record.status)) {
    await wakeParentStep(services.scheduler, record);
    return;
  }
  if (record.iteration > n) return;
  const { keys } = context.write;
  let chat = loaded.chat;

  if (data.previous_calls > 0 && !loaded.resultsDone) {
    const now = services.now().toISOString();
    const plan = resultsCommit({
      run: record,
      messages: fallbackResults(data, loaded, now),
      chatLength: chat.length,
      now,
    });
    crashPoint('iteration.before_results_commit');
    const result = await context.store.commit({
      journalField: journalField.results(data.iteration - 1),
      plan,
      expectedChatLength: chat.length,
    });
    ensureOwned(result, 'appending tool results');
    if (result.status === 'run_finished') return;
    if (result.status !== 'ok')
      throw new RatchetError('internal', `appending tool results: ${JSON.stringify(result)}`);
    chat = [...chat, ...plan.messages];
    crashPoint('iteration.after_results_commit');
  }

  let entry = loaded.reply;
  // Who made the reply: the run's agent, or the member of a handoff group in control then.
  let sender = entry ? (chat[entry.index]?.sender ?? record.agent) : record.agent;
  if (!entry) {
    const group = services.handoffs.get(record.agent);
    const member = group ? handoffState(chat, record.id, group.members).active : record.agent;
    sender = member;
    let reply: ReplyOfTurn;
    if (group && !services.agents.has(member)) {
      // A team or group in control of a handoff group answers as one member: a child run of its own.
      reply = await compositeReply(context, record, member, chat);
    } else {
      const agent = runAgent(services, member, record.lineage, group?.name);
      ({ reply, record, rev } = await modelReply(context, data, agent, { record, rev }, chat));
    }
    const parts = assignToolCallIds(reply.parts, n);
    const plan = replyCommit({
      run: record,
      sender: member,
      iteration: n,
      parts,
      usage: reply.usage,
      costUsd: reply.costUsd,
      wastedCalls: loaded.modelCalls,
      decision: decideReply(parts, n, reply.maxIterations),
      chatLength: chat.length,
      now: services.now().toISOString(),
    });
    const result = await context.store.commit({
      journalField: journalField.reply(n),
      plan,
      ...(services.agents.has(member) ? { agentUsageKey: context.store.agentUsageKey(member) } : {}),
      treeUsageKey: treeUsageKeyOf(services.space, record),
      expectedRev: rev,
      expectedChatLength: chat.length,
    });
    ensureOwned(result, 'recording the model reply');
    if (result.status === 'run_finished') return;
    if (result.status === 'ok') entry = plan.journal;
    else if (result.status === 'done')
      entry = parseJsonRecord(replyEntrySchema, result.value, `journal reply:${n}`);
    else throw new RatchetError('internal', `recording the model reply: ${JSON.stringify(result)}`);
    context.logger.info(
      { decision: entry.decision, tool_calls: entry.tool_calls.length },
      'iteration committed',
    );
    crashPoint('iteration.after_commit');
  }
  if (entry.decision !== 'tools') await wakeParentStep(services.scheduler, record);

  if (entry.decision === 'tools') {
    const place = {
      session_id: data.session_id,
      run_id: data.run_id,
      // A handoff group's member in control made the calls: its tools run them.
      agent: sender,
      ...(services.handoffs.has(record.agent) ? { group: record.agent } : {}),
      chat_id: record.chat_id,
      lineage: record.lineage,
    };
    await services.scheduler.queues.addToolCalls(
      keys.shard,
      toolJobsOf(
        place,
        n,
        entry.index,
        entry.tool_calls.map((call) => call.name),
      ),
    );
    crashPoint('iteration.after_enqueue');
  }
}

export const iterationStep: StepKind<IterationJobData> = defineStepKind({
  name: 'iteration',
  dataSchema: iterationJobDataSchema,
  describe: (data) => ({
    run_id: data.run_id,
    session_id: data.session_id,
    agent: data.agent,
    iteration: data.iteration,
  }),
  label: (data) => `iteration ${data.iteration}`,
  run: execute,
});
