import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { costOf } from '../../../models/pricing.js';
import { budgetExceeded } from '../../core/budget.js';
import { journalField } from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import { commit, isPark, type StepAction } from '../runner/step-action.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import { raiseBudget } from '../tool/tool-interaction.js';
import { estimateInputTokens } from './model-call.js';
import type { RequestState } from './turn.js';

/**
 * The budget stage: a request that would go over the run's or the agent's budget fails the run, or (when the
 * budget says `ask`) waits for a person to raise it; a raise is recorded once per question
 * (`budget-raise:<k>`), then `next` sends the request.
 */
export async function budgetStage(
  request: RequestState,
  messages: readonly Message[],
  next: (request: RequestState) => Promise<StepAction>,
): Promise<StepAction> {
  const { context, data, agent, stored } = request;
  const { record } = stored;
  const exceeded = await budgetCheck(context, agent, record, messages);
  if (!exceeded) return next(request);
  const raised = exceeded.ask && (await raiseBudget(context, data, exceeded.message, record.budget_raises));
  if (isPark(raised)) return raised;
  if (!raised) throw new RatchetError('budget_exceeded', exceeded.message);
  // The user raised the budget: recorded once per question (a retried step finds it done).
  const now = context.services.now().toISOString();
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
        if (result.status === 'ok')
          return next({ ...request, stored: { record: raisedRecord, rev: stored.rev + 1 } });
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
