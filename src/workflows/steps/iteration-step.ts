import type { Message } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import { chatKey, runKeys } from '../../redis/keys.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import { assignToolCallIds, decideReply } from '../core/reply-decision.js';
import { replyCommit, resultsCommit } from '../core/run-commits.js';
import { crashPoint } from '../crash-points.js';
import { type IterationJobData, iterationJobDataSchema } from '../job-data.js';
import {
  journalField,
  type ReplyEntry,
  replyEntrySchema,
  type ToolOutcomeEntry,
  toolOutcomeSchema,
} from '../journal.js';
import { isFinished, type StoredRun } from '../run-record.js';
import { commitStep, decodeChat, parseRun } from '../store.js';
import { announceAttemptFailure, ensureOwned, failRun } from './run-failures.js';
import type { AgentRuntime, StepContext } from './step-context.js';
import type { StepKind } from './step-kind.js';

interface LoadedIteration {
  run: StoredRun | undefined;
  reply: ReplyEntry | undefined;
  previousReply: ReplyEntry | undefined;
  resultsDone: boolean;
  outcomes: (ToolOutcomeEntry | undefined)[];
  chat: Message[];
}

/** One round trip: the run, the journal fields this iteration needs, and the chat. */
async function loadIteration(context: StepContext, data: IterationJobData): Promise<LoadedIteration> {
  const { services } = context;
  const keys = runKeys(services.space, data.session_id, data.run_id);
  const n = data.iteration;
  const fields = [journalField.reply(n), journalField.reply(n - 1), journalField.results(n - 1)];
  for (let index = 0; index < data.previous_calls; index += 1)
    fields.push(journalField.toolOutcome(n - 1, index));
  const runText = await services.redis.hmget(keys.run, 'record', 'rev');
  const [record, rev] = runText;
  if (!record)
    return {
      run: undefined,
      reply: undefined,
      previousReply: undefined,
      resultsDone: false,
      outcomes: [],
      chat: [],
    };
  const run = parseRun(record, rev ?? null, `run ${data.run_id}`);
  const chat = chatKey(services.space, data.session_id, run.record.chat_id);
  const [journalReply, chatReply] = (await services.redis
    .pipeline()
    .hmget(keys.journal, ...fields)
    .lrange(chat, 0, -1)
    .exec()) as [[Error | null, (string | null)[]], [Error | null, string[]]];
  if (journalReply[0]) throw journalReply[0];
  if (chatReply[0]) throw chatReply[0];
  const [reply, previousReply, results, ...outcomes] = journalReply[1];
  return {
    run,
    reply: reply
      ? parseJsonRecord(replyEntrySchema, reply, `journal ${fields[0]} of ${data.run_id}`)
      : undefined,
    previousReply: previousReply
      ? parseJsonRecord(replyEntrySchema, previousReply, `journal ${fields[1]} of ${data.run_id}`)
      : undefined,
    resultsDone: results !== null && results !== undefined,
    outcomes: outcomes.map((text, index) =>
      text
        ? parseJsonRecord(toolOutcomeSchema, text, `journal ${fields[3 + index]} of ${data.run_id}`)
        : undefined,
    ),
    chat: decodeChat(chatReply[1], chat),
  };
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

function agentOf(context: StepContext, name: string): AgentRuntime {
  const agent = context.services.agents.get(name);
  if (!agent) throw new RatchetError('agent_not_found', `agent "${name}" is not configured on this worker`);
  return agent;
}

/** A tool job that failed for good leaves no outcome: the model hears of it as an error result. */
function missingOutcome(name: string, now: string): ToolOutcomeEntry {
  return {
    v: 1,
    content: `the call of tool "${name}" could not be completed (its job failed after all retries)`,
    is_error: true,
    at: now,
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
  const { record, rev } = loaded.run;
  // A later iteration already committed, or the run is over: this is a stale retry.
  if (isFinished(record.status) || record.iteration > n) return;
  const keys = runKeys(services.space, data.session_id, data.run_id);
  const chatKeyName = chatKey(services.space, data.session_id, record.chat_id);
  const commitBase = {
    keys,
    chatKey: chatKeyName,
    lockKey: context.lockKey,
    token: context.token,
    eventsMaxLength: services.eventsMaxLength,
  };
  let chat = loaded.chat;

  if (data.previous_calls > 0 && !loaded.resultsDone) {
    const previous = loaded.previousReply;
    if (!previous)
      throw new RatchetError('record_invalid', `iteration ${n - 1} of ${data.run_id} has no recorded reply`);
    const now = services.now().toISOString();
    const plan = resultsCommit({
      run: record,
      iteration: n - 1,
      calls: previous.tool_calls,
      outcomes: previous.tool_calls.map(
        (call, index) => loaded.outcomes[index] ?? missingOutcome(call.name, now),
      ),
      chatLength: chat.length,
      now,
    });
    crashPoint('iteration.before_results_commit');
    const result = await commitStep(services.redis, {
      ...commitBase,
      journalField: journalField.results(n - 1),
      plan,
      expectedChatLength: chat.length,
    });
    ensureOwned(result, 'appending tool results');
    if (result.status === 'run_finished') return;
    if (result.status === 'ok') chat = [...chat, ...plan.messages];
    else throw new RatchetError('internal', `appending tool results: ${JSON.stringify(result)}`);
    crashPoint('iteration.after_results_commit');
  }

  let entry = loaded.reply;
  if (!entry) {
    const agent = agentOf(context, record.agent);
    crashPoint('iteration.before_model_call');
    const completion = await agent.completer.complete(
      {
        messages: [...systemMessage(agent, record.id, record.created_at), ...chat],
        tools: agent.tools,
        options: {},
        context: {
          sessionId: data.session_id,
          runId: data.run_id,
          agent: agent.name,
          iteration: n,
          attempt: context.attempt,
        },
      },
      context.signal,
    );
    crashPoint('iteration.after_model_call');
    const parts = assignToolCallIds(completion.parts, n);
    const plan = replyCommit({
      run: record,
      iteration: n,
      parts,
      usage: completion.usage,
      decision: decideReply(parts, n, agent.maxIterations),
      chatLength: chat.length,
      now: services.now().toISOString(),
    });
    const result = await commitStep(services.redis, {
      ...commitBase,
      journalField: journalField.reply(n),
      plan,
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

  if (entry.decision === 'tools') {
    await services.engine.queues.addIteration(keys.shard, {
      v: 1,
      session_id: data.session_id,
      run_id: data.run_id,
      agent: record.agent,
      iteration: n + 1,
      previous_calls: entry.tool_calls.length,
    });
    crashPoint('iteration.after_enqueue');
  }
}

export const iterationStep: StepKind<IterationJobData> = {
  name: 'iteration',
  dataSchema: iterationJobDataSchema,
  describe: (data) => ({
    run_id: data.run_id,
    session_id: data.session_id,
    agent: data.agent,
    iteration: data.iteration,
  }),
  execute,
  fail: (context, data, error) => failRun(context, data, error),
  announceFailure: (context, data, error, retryInMs) =>
    announceAttemptFailure(context, { ...data, step: `iteration ${data.iteration}` }, error, retryInMs),
};
