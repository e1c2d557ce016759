import { describe, expect, it } from 'vitest';
import {
  goalsAfterReply,
  goalsAfterResults,
  partialAnswer,
  unfinishedReason,
} from '../../src/workflows/core/supervisor.js';
import type { SubGoal } from '../../src/workflows/run-record.js';

const limits = { maxSubGoals: 3 };
const call = (name: string, args: unknown, id = 'c1') => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
const goal = (id: string, status: SubGoal['status'], result: string | null = null): SubGoal => ({
  id,
  title: id,
  status,
  result,
});

describe('sub-goals, as the model moves them (its arguments are hostile)', () => {
  it('ignores calls whose arguments do not parse, and moves nothing through them', () => {
    const current = [goal('a', 'pending')];
    for (const args of [
      '{not json',
      '[]',
      'null',
      '"a"',
      { sub_goals: 'a' },
      { sub_goals: [{ id: 'a b', title: 'x' }] },
    ]) {
      expect(goalsAfterReply(current, [call('declare_sub_goals', args)], limits).changed).toBe(false);
    }
    expect(
      goalsAfterReply(current, [call('update_sub_goal', { id: 'a', status: 'completed', extra: 1 })], limits)
        .changed,
    ).toBe(false);
    // Duplicate ids are refused as a whole.
    const twice = {
      sub_goals: [
        { id: 'a', title: 'x' },
        { id: 'a', title: 'y' },
      ],
    };
    expect(goalsAfterReply(null, [call('declare_sub_goals', twice)], limits).goals).toBeNull();
  });

  it('never moves a completed sub-goal back, by an update, a delegation or a re-plan', () => {
    const current = [goal('a', 'completed', 'done'), goal('b', 'failed', 'oops')];
    const after = goalsAfterReply(
      current,
      [
        call('update_sub_goal', { id: 'a', status: 'failed' }),
        call('delegate_to_agent', { agent: 'x', task: 't', sub_goal: 'a' }),
        call('declare_sub_goals', {
          sub_goals: [
            { id: 'a', title: 'again' },
            { id: 'c', title: 'new' },
          ],
        }),
      ],
      limits,
    );
    expect(after.goals).toEqual([
      goal('a', 'completed', 'done'),
      { id: 'c', title: 'new', status: 'pending', result: null },
    ]);
    expect(after.delegations).toBe(1);
  });

  it('counts every task of spawn_agents as a delegation, and its results finish each sub-goal', () => {
    const spawn = call('spawn_agents', {
      tasks: [
        { agent: 'x', task: '1', sub_goal: 'a' },
        { agent: 'y', task: '2', sub_goal: 'b' },
        { agent: 'z', task: '3' },
      ],
    });
    const started = goalsAfterReply([goal('a', 'pending'), goal('b', 'pending')], [spawn], limits);
    expect(started.delegations).toBe(3);
    expect(started.goals?.map((g) => g.status)).toEqual(['in_progress', 'in_progress']);
    const answers = JSON.stringify([{ answer: 'A' }, { answer: 'B' }, { answer: 'C' }]);
    const done = goalsAfterResults(
      started.goals ?? [],
      [spawn],
      new Map([['c1', { content: answers, is_error: false }]]),
    );
    expect(done.goals.map((g) => `${g.status}:${g.result}`)).toEqual(['completed:A', 'completed:B']);
    const failed = goalsAfterResults(
      started.goals ?? [],
      [spawn],
      new Map([['c1', { content: 'boom', is_error: true }]]),
    );
    expect(failed.goals.map((g) => g.status)).toEqual(['failed', 'failed']);
  });

  it('cuts a long result, and says what a partial run has', () => {
    const after = goalsAfterResults(
      [goal('a', 'in_progress')],
      [call('delegate_to_agent', { agent: 'x', task: 't', sub_goal: 'a' })],
      new Map([['c1', { content: 'x'.repeat(10_000), is_error: false }]]),
    );
    expect(after.goals[0]?.result?.length).toBeLessThan(700);
    expect(unfinishedReason(after.goals)).toBeUndefined();
    expect(unfinishedReason([goal('a', 'completed'), goal('b', 'failed')])).toBe(
      'the run answered with 1 of 2 sub-goals completed',
    );
    expect(partialAnswer(null, 'limit')).toBe('Stopped: limit. No sub-goals were declared.');
  });
});
