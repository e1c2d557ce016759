import type { Budget } from '../run-record.js';

export interface BudgetCheck {
  /** Tokens the run used so far (input + output) and what they cost. */
  usedTokens: number;
  usedCostUsd: number;
  /**
   * What the run's whole tree used (the run and every child run below its root), when the run budget is a
   * tree's: the run budget is checked against this, the agent budget against the run's own use.
   */
  tree?: { tokens: number; costUsd: number };
  /** The next request's estimated input tokens and cost. */
  nextTokens: number;
  nextCostUsd: number;
  runBudget: Budget | null;
  agentBudget: Budget | undefined;
  /** Times the user raised the budget: every limit counts (1 + raises) times. */
  raises: number;
}

export interface BudgetExceeded {
  message: string;
  /** Ask the user whether to raise it, or fail. */
  ask: boolean;
}

/**
 * Whether the next model request would go over the run's or the agent's budget: undefined when it fits,
 * else the reason with the figures (the run then fails with budget_exceeded).
 */
export function budgetExceeded(check: BudgetCheck): BudgetExceeded | undefined {
  const limits = [
    ['run', check.runBudget ?? undefined],
    ['agent', check.agentBudget],
  ] as const;
  const times = 1 + check.raises;
  for (const [owner, budget] of limits) {
    if (!budget) continue;
    const ask = budget.on_exceeded === 'ask';
    const { usedTokens, usedCostUsd } =
      owner === 'run' && check.tree
        ? { usedTokens: check.tree.tokens, usedCostUsd: check.tree.costUsd }
        : check;
    const whose = owner === 'run' && check.tree ? 'the run and the runs it delegated to have' : 'the run has';
    const tokens = usedTokens + check.nextTokens;
    if (budget.tokens !== undefined && tokens > budget.tokens * times) {
      const message =
        `budget exceeded: ${whose} used ${usedTokens} tokens and the next model request needs about ` +
        `${check.nextTokens} more, over the ${owner} budget of ${budget.tokens * times} tokens`;
      return { message, ask };
    }
    const cost = usedCostUsd + check.nextCostUsd;
    if (budget.cost_usd !== undefined && cost > budget.cost_usd * times) {
      const message =
        `budget exceeded: ${whose} cost $${usedCostUsd.toFixed(6)} and the next model request about ` +
        `$${check.nextCostUsd.toFixed(6)} more, over the ${owner} budget of $${budget.cost_usd * times}`;
      return { message, ask };
    }
  }
  return undefined;
}
