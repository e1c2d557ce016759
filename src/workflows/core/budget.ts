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
    const tokens = check.usedTokens + check.nextTokens;
    if (budget.tokens !== undefined && tokens > budget.tokens * times) {
      const message =
        `budget exceeded: the run has used ${check.usedTokens} tokens and the next model request needs about ` +
        `${check.nextTokens} more, over the ${owner} budget of ${budget.tokens * times} tokens`;
      return { message, ask };
    }
    const cost = check.usedCostUsd + check.nextCostUsd;
    if (budget.cost_usd !== undefined && cost > budget.cost_usd * times) {
      const message =
        `budget exceeded: the run has cost $${check.usedCostUsd.toFixed(6)} and the next model request about ` +
        `$${check.nextCostUsd.toFixed(6)} more, over the ${owner} budget of $${budget.cost_usd * times}`;
      return { message, ask };
    }
  }
  return undefined;
}

/**
 * The budget a child run inherits: what is left of its parent's run budget (raises included) when the child
 * starts, so a tree of delegations never spends more than its root was given. Null when the parent has none.
 */
export function inheritedBudget(parent: {
  budget: Budget | null;
  budget_raises: number;
  usage: { input_tokens: number; output_tokens: number };
  cost_usd: number;
}): Budget | null {
  const { budget } = parent;
  if (!budget) return null;
  const times = 1 + parent.budget_raises;
  const usedTokens = parent.usage.input_tokens + parent.usage.output_tokens;
  return {
    // A parent with nothing left still gives its child the smallest budget: the child's first request fails.
    ...(budget.tokens !== undefined ? { tokens: Math.max(1, budget.tokens * times - usedTokens) } : {}),
    ...(budget.cost_usd !== undefined
      ? { cost_usd: Math.max(1e-9, budget.cost_usd * times - parent.cost_usd) }
      : {}),
    ...(budget.on_exceeded !== undefined ? { on_exceeded: budget.on_exceeded } : {}),
  };
}
