import {
  type ContextView,
  contextViewSchema,
  emptyContextView,
  type Message,
  textOf,
} from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import type { Completion } from '../../models/completer.js';
import { costOf } from '../../models/pricing.js';
import { addUsage, type Usage } from '../../models/usage.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import {
  applySummary,
  buildSummaryRequest,
  type CompactionEntry,
  type ContextErrorPlan,
  isContextLengthError,
  type ModelCallInput,
  type ModelCallPlan,
  type PreviousRequest,
  planModelCall,
  summaryInputShare,
} from '../core/effects/index.js';
import { type CommitPlan, compactionCommit } from '../core/run-commits.js';
import { crashPoint } from '../crash-points.js';
import { messageId } from '../ids.js';
import type { IterationJobData } from '../job-data.js';
import { journalField, replyEntrySchema } from '../journal.js';
import type { StoredRun } from '../run-record.js';
import { callModel, requestContext } from './model-call.js';
import { commit, done, isPark, type Park, type StepAction } from './step-action.js';
import type { AgentRuntime, StepContext } from './step-context.js';
import type { ObservedRun } from './step-observer.js';

/**
 * The effects' side of an iteration (docs/effects.md): what the model is sent of the chat, planned from
 * persisted data only — the chat, the chat's context view, the previous request's recorded numbers and the
 * agent's config — so every worker and every retry plans the same request; and the compaction, a durable
 * model call of its own whose result (the new view) is committed before the request that needs it.
 */

/** The chat's context view as stored beside it (none: nothing summarised yet). */
export function decodeView(json: string | null, where: string): ContextView {
  return json === null ? emptyContextView : parseJsonRecord(contextViewSchema, json, where);
}

/** What the previous iteration's request was, as its reply's journal entry recorded it. */
export function previousRequestOf(replyJson: string | null, where: string): PreviousRequest | undefined {
  if (replyJson === null) return undefined;
  const context = parseJsonRecord(replyEntrySchema, replyJson, where).context;
  return context && { input_tokens: context.input_tokens, sent_estimate: context.sent_estimate };
}

/** Where the run's own part of the chat starts: its input message (the chat's start when it has none). */
export function runStartOf(chat: readonly Message[], runId: string): number {
  const id = messageId.input(runId);
  return Math.max(
    0,
    chat.findLastIndex((message) => message.id === id),
  );
}

/**
 * The agent's effects over the request. They are pure code; one that throws (a bug) would throw on every
 * retry too, so the run fails at once with the message instead of spending its attempts.
 */
export function planRequest(input: ModelCallInput): ModelCallPlan {
  try {
    return planModelCall(input);
  } catch (error) {
    if (error instanceof RatchetError) throw error;
    throw new RatchetError(
      'effect_failed',
      `an effect failed while planning the request of iteration ${input.iteration}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

/** The transcript's share of the window in each try of a summary request the provider refused as too long. */
const summaryInputShares = [summaryInputShare, summaryInputShare / 2, summaryInputShare / 4] as const;

/**
 * Asks the agent's model for the summary of the chat up to `upTo`. A provider whose tokenizer counts more than
 * the estimate may refuse the request as too long: it is made again with a transcript half as long, twice;
 * then the run fails with context_exceeded.
 */
async function summaryCompletion(
  context: StepContext,
  data: IterationJobData,
  agent: AgentRuntime,
  input: ModelCallInput,
  upTo: number,
  now: string,
  run: ObservedRun,
): Promise<Completion | Park> {
  for (const inputShare of summaryInputShares) {
    const request = buildSummaryRequest({
      runId: data.run_id,
      chat: input.chat,
      view: input.view,
      upTo,
      contextWindow: input.contextWindow,
      now,
      inputShare,
    });
    try {
      return await callModel(
        context,
        agent,
        {
          messages: request.messages,
          tools: [],
          options: { maxTokens: request.maxTokens },
          context: requestContext(context, data, agent.name, 'summary'),
        },
        journalField.summaryCalls(data.iteration),
        run,
        'summary',
      );
    } catch (error) {
      if (!isContextLengthError(error)) throw error;
      context.logger.warn(
        { input_share: inputShare },
        'the provider refused the summary request as too long',
      );
    }
  }
  throw new RatchetError(
    'context_exceeded',
    `the model refused every summary request as longer than its context window of ${input.contextWindow} tokens, ` +
      `the last one with a transcript of ${summaryInputShares.at(-1)} of the window: set the provider's context_window to what the model accepts`,
  );
}

/** A compaction to make before the request: after the planner's threshold or the provider's refusal. */
export type CompactionDecision = Extract<ModelCallPlan | ContextErrorPlan, { kind: 'compact' }>;

/**
 * Summarises the chat up to the decision's cut with the agent's model, then commits the new view, the
 * compaction event and the summary's usage in one fenced write (journal field compact:<n>:<cut>). A crash
 * before that commit repeats the summary request once; after it, the next attempt plans from the new view and
 * never asks again. `then` continues with the run as committed and the new view.
 */
export async function compact(
  context: StepContext,
  data: IterationJobData,
  agent: AgentRuntime,
  stored: StoredRun,
  input: ModelCallInput,
  decision: CompactionDecision,
  then: (after: StoredRun, view: ContextView) => Promise<StepAction>,
): Promise<StepAction> {
  const { services } = context;
  const now = services.now().toISOString();
  crashPoint('iteration.before_summary_call');
  const completion = await summaryCompletion(context, data, agent, input, decision.up_to, now, stored.record);
  if (isPark(completion)) return completion;
  crashPoint('iteration.after_summary_call');
  const outcome = applySummary({
    runId: data.run_id,
    iteration: data.iteration,
    system: input.system,
    chat: input.chat,
    view: input.view,
    upTo: decision.up_to,
    summaryText: textOf(completion),
    tokensBefore: decision.tokens,
    reason: decision.reason,
    previous: input.previous,
    contextWindow: input.contextWindow,
    now,
  });
  const costUsd = costOf(completion.usage, agent.provider.price);
  const plan =
    outcome.kind === 'summary'
      ? compactionCommit({
          run: stored.record,
          view: outcome.view,
          event: outcome.event,
          usage: completion.usage,
          costUsd,
          now,
        })
      : declinedCompactionCommit(stored.record, outcome.view, completion.usage, costUsd, now);
  if (outcome.kind === 'summary') {
    context.logger.info(
      {
        up_to: decision.up_to,
        reason: decision.reason,
        tokens_before: outcome.event.data.tokens_before,
        tokens_after: outcome.event.data.tokens_after,
      },
      'context compacted',
    );
  } else {
    context.logger.warn(
      { up_to: decision.up_to, tokens: decision.tokens, context_window: input.contextWindow },
      'the model answered the summary request with nothing: the request still fits, sent without compacting',
    );
  }
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.compaction(data.iteration, decision.up_to),
        plan,
        view: JSON.stringify(outcome.view),
        expectedRev: stored.rev,
        ...(services.agents.has(agent.name)
          ? { agentUsageKey: context.store.agentUsageKey(agent.name) }
          : {}),
        treeUsageKey: context.store.treeUsageKey(stored.record),
      },
    },
    {
      what: 'recording the summary',
      before: 'iteration.before_summary_commit',
      after: 'iteration.after_summary_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status === 'ok' && plan.record)
          return then({ record: plan.record, rev: stored.rev + 1 }, outcome.view);
        // Committed by an earlier attempt, or the run moved on since it was read: the next attempt reads
        // the run and the view again.
        throw new RatchetError(
          'internal',
          `recording the summary of ${data.run_id}: ${JSON.stringify(result)}`,
          { retryable: true },
        );
      },
    },
  );
}

/**
 * A compaction given up (an empty summary of a request that still fits): the view that records it and the
 * summary request's usage and cost, with no event (nothing about what the model is sent changed).
 */
function declinedCompactionCommit(
  run: StoredRun['record'],
  view: ContextView,
  usage: Usage,
  costUsd: number,
  now: string,
): CommitPlan<CompactionEntry> {
  return {
    journal: { ...view, usage, cost_usd: costUsd },
    record: { ...run, usage: addUsage(run.usage, usage), cost_usd: run.cost_usd + costUsd, updated_at: now },
    messages: [],
    events: [],
    finished: false,
    usage: { ...usage, cost_usd: costUsd },
  };
}
