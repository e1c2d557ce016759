import { describe, expect, it } from 'vitest';
import { stateConditionHolds } from '../../src/workflows/core/team.js';

// round_robin_until's state conditions read values agents set: a hostile model may set anything.
describe('stateConditionHolds', () => {
  const equals = { state_equals: { key: 'review', value: { status: 'approved', n: 2 } } };

  it('compares as JSON, key order aside', () => {
    expect(stateConditionHolds(equals, '{"n":2,"status":"approved"}')).toBe(true);
    expect(stateConditionHolds(equals, '{"n":1,"status":"approved"}')).toBe(false);
    expect(stateConditionHolds(equals, null)).toBe(false);
    expect(stateConditionHolds({ state_key: 'review' }, '"anything"')).toBe(true);
  });

  it('treats a value nested past the stack, or text that is not JSON, as not equal instead of throwing', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(stateConditionHolds(equals, deep)).toBe(false);
    expect(stateConditionHolds(equals, '{not json')).toBe(false);
  });
});
