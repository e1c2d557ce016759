import { type ContextView, textOf } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import type { Completion } from '../../../models/completer.js';
import { costOf } from '../../../models/pricing.js';
import { addUsage, type Usage } from '../../../models/usage.js';
import {
  applySummary,
  buildSummaryRequest,
  type CompactionEntry,
  isContextLengthError,
  type ModelCallInput,
  summaryInputShare,
} from '../../core/effects/index.js';
import { type CommitPlan, compactionCommit } from '../../core/run-commits.js';
import { crashPoint } from '../../crash-points.js';
import type { IterationJobData } from '../../job-data.js';
import { journalField } from '../../journal.js';
import { type StoredRun, treeRootOf } from '../../run-record.js';
import { done, isPark, type Park } from '../runner/step-action.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import type { ObservedRun } from '../runner/step-observer.js';
import { callModel, requestContext } from './model-call.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

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

/**
 * The compaction stage, when one is due (the plan stage's threshold, or the provider's refusal of the request
 * as too long): summarises the chat up to the decision's cut with the agent's model, then commits the new
 * view, the compaction event and the summary's usage in one fenced write (journal field compact:<n>:<cut>). A
 * crash before that commit repeats the summary request once; after it, the next attempt plans from the new
 * view and never asks again. The request is then planned again from the new view.
 */
export async function compactionStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, agent, stored, input, compaction: decision } = turn;
  if (!decision || !agent || !input) return next(turn);
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
  return commitThen(
    {
      op: 'run',
      request: {
        journalField: journalField.compaction(data.iteration, decision.up_to),
        plan,
        view: JSON.stringify(outcome.view),
        expectedRev: stored.rev,
        usageSums: {
          ...(services.agents.has(agent.name) ? { agent: agent.name } : {}),
          treeRoot: treeRootOf(stored.record),
        },
      },
    },
    {
      what: 'recording the summary',
      before: 'iteration.before_summary_commit',
      after: 'iteration.after_summary_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status === 'ok' && plan.record) {
          return next({
            ...turn,
            stored: { record: plan.record, rev: stored.rev + 1 },
            input: { ...input, view: outcome.view },
            compaction: undefined,
          });
        }
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
