import { describe, expect, it } from 'vitest';
import { runnableSummaries } from '../../src/api/index.js';

describe('runnableSummaries', () => {
  it('lists agents, then handoff groups, then teams, each with its kind', () => {
    expect(
      runnableSummaries({
        agents: [{ name: 'writer', description: 'writes' }],
        handoffs: [{ name: 'support', description: 'front desk' }],
        teams: [{ name: 'newsroom', description: 'writes and reviews' }],
      }),
    ).toEqual([
      { name: 'writer', description: 'writes', kind: 'agent' },
      { name: 'support', description: 'front desk', kind: 'handoff' },
      { name: 'newsroom', description: 'writes and reviews', kind: 'team' },
    ]);
  });
});
