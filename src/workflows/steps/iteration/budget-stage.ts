import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { costOf } from '../../../models/pricing.js';
import { budgetExceeded } from '../../core/budget.js';
import { journalField } from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import { isPark } from '../runner/step-action.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import { raiseBudget } from '../tool/tool-interaction.js';
import { estimateInputTokens } from './model-call.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

/**
 * The budget stage: a planned request that would go over the run's or the agent's budget fails the run, or
 * (when the budget says `ask`) waits for a person to raise it; a raise is recorded once per question
 * (`budget-raise:<k>`), then the request is sent.
 */
export async function budgetStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, agent, stored, plan } = turn;
  if (!agent || !plan || turn.withinBudget) return next(turn);
  const { record } = stored;
  const exceeded = await budgetCheck(context, agent, record, plan.messages);
  if (!exceeded) return next({ ...turn, withinBudget: true });
  const raised = exceeded.ask && (await raiseBudget(context, data, exceeded.message, record.budget_raises));
  if (isPark(raised)) return raised;
  if (!raised) throw new RatchetError('budget_exceeded', exceeded.message);
  // The user raised the budget: recorded once per question (a retried step finds it done).
  const now = context.services.now().toISOString();
  const raisedRecord: RunRecord = { ...record, budget_raises: record.budget_raises + 1, updated_at: now };
  return commitThen(
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
          return next({
            ...turn,
            stored: { record: raisedRecord, rev: stored.rev + 1 },
            withinBudget: true,
          });
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
