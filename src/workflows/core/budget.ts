import type { Budget } from '../run-record.js';

export interface BudgetCheck {
  /** Tokens used so far (input + output) and what they cost. */
  usedTokens: number;
  usedCostUsd: number;
  /** The next request's estimated input tokens and cost. */
  nextTokens: number;
  nextCostUsd: number;
  runBudget: Budget | null;
  agentBudget: Budget | undefined;
}

/**
 * Whether the next model request would go over the run's or the agent's budget: undefined when it fits,
 * else the reason with the figures (the run then fails with budget_exceeded).
 */
export function budgetExceeded(check: BudgetCheck): string | undefined {
  const limits = [
    ['run', check.runBudget ?? undefined],
    ['agent', check.agentBudget],
  ] as const;
  for (const [owner, budget] of limits) {
    if (!budget) continue;
    const tokens = check.usedTokens + check.nextTokens;
    if (budget.tokens !== undefined && tokens > budget.tokens) {
      return (
        `budget exceeded: the run has used ${check.usedTokens} tokens and the next model request needs about ` +
        `${check.nextTokens} more, over the ${owner} budget of ${budget.tokens} tokens`
      );
    }
    const cost = check.usedCostUsd + check.nextCostUsd;
    if (budget.cost_usd !== undefined && cost > budget.cost_usd) {
      return (
        `budget exceeded: the run has cost $${check.usedCostUsd.toFixed(6)} and the next model request about ` +
        `$${check.nextCostUsd.toFixed(6)} more, over the ${owner} budget of $${budget.cost_usd}`
      );
    }
  }
  return undefined;
}
