import { describe, expect, it } from 'vitest';
import { budgetExceeded } from '../../src/workflows/core/budget.js';

const base = {
  usedTokens: 900,
  usedCostUsd: 0.01,
  nextTokens: 50,
  nextCostUsd: 0.001,
  runBudget: null,
  agentBudget: undefined,
  raises: 0,
};

describe('budgetExceeded', () => {
  it('lets a request that fits through', () => {
    expect(budgetExceeded(base)).toBeUndefined();
    expect(budgetExceeded({ ...base, runBudget: { tokens: 950, cost_usd: 0.011 } })).toBeUndefined();
  });

  it('stops a request over the run budget in tokens, with the figures', () => {
    expect(budgetExceeded({ ...base, runBudget: { tokens: 940 } })).toEqual({
      message:
        'budget exceeded: the run has used 900 tokens and the next model request needs about 50 more, over the run budget of 940 tokens',
      ask: false,
    });
  });

  it('stops a request over the agent budget in money, and says when the budget asks the user', () => {
    const exceeded = budgetExceeded({ ...base, agentBudget: { cost_usd: 0.0105, on_exceeded: 'ask' } });
    expect(exceeded?.message).toMatch(
      /the run has cost \$0\.010000 and the next model request about \$0\.001000 more, over the agent budget of \$0\.0105/,
    );
    expect(exceeded?.ask).toBe(true);
  });

  it('counts every budget once more per raise', () => {
    // 950 tokens: over 500, within 2 × 500.
    expect(budgetExceeded({ ...base, runBudget: { tokens: 500 }, raises: 0 })).toBeDefined();
    expect(budgetExceeded({ ...base, runBudget: { tokens: 500 }, raises: 1 })).toBeUndefined();
  });
});
