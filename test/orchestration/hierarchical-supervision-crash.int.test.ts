import { expect } from 'vitest';
import type { HarnessAgent } from '../helpers/harness.js';
import { describeTreeCrashes } from '../helpers/run-tree.js';

/**
 * Hierarchical supervision: a supervisor delegates each of its two sub-goals to another supervisor, which
 * declares two sub-goals of its own and delegates each to a helper. Real worker processes are SIGKILLed at
 * points of both levels and a fresh one takes over: the tree ends as without faults, every goal of both
 * levels done once (one helper run per lower goal, one lead run per upper goal), and the progress of both
 * levels in the session's event log, each event once.
 */
const delegate = (agent: string, task: string, subGoal: string) => ({
  tool_calls: [{ name: 'delegate_to_agent', arguments: { agent, task, sub_goal: subGoal } }],
});
const declare = (...goals: [id: string, title: string][]) => ({
  tool_calls: [
    { name: 'declare_sub_goals', arguments: { sub_goals: goals.map(([id, title]) => ({ id, title })) } },
  ],
});
const lead = (name: string, goal: string): HarnessAgent => ({
  name,
  script: {
    replies: [
      declare([`${goal}1`, `${goal} part one`], [`${goal}2`, `${goal} part two`]),
      delegate('helper', `do ${goal}1`, `${goal}1`),
      delegate('helper', `do ${goal}2`, `${goal}2`),
    ],
  },
  options: { supervisor: {} },
});
const agents: HarnessAgent[] = [
  {
    name: 'boss',
    script: {
      replies: [
        declare(['a', 'research'], ['b', 'writing']),
        delegate('lead_a', 'run the research', 'a'),
        delegate('lead_b', 'run the writing', 'b'),
      ],
    },
    options: { supervisor: {} },
  },
  lead('lead_a', 'a'),
  lead('lead_b', 'b'),
  { name: 'helper', script: { default: { text: 'done', delay_ms: 100 } } },
];

const progressOf = (events: readonly string[]) =>
  events
    .filter((event) => event.includes('"kind":"progress"'))
    .map((event) => (JSON.parse(event) as { data: { message: string } }).data.message);

describeTreeCrashes({
  title: 'a supervisor of supervisors finishes every goal once, whatever a SIGKILL interrupts',
  options: { agents },
  start: { input: 'research and write' },
  checkReference: (reference) => {
    expect(reference.result).toMatch(
      /^All 2 sub-goals are completed\.\n\n\[✓\] a: research — All 2 sub-goals/,
    );
    expect(Object.keys(reference.runs).sort()).toEqual([
      'root',
      'root/lead_a',
      'root/lead_a/helper',
      'root/lead_a/helper#2',
      'root/lead_b',
      'root/lead_b/helper',
      'root/lead_b/helper#2',
    ]);
    expect(reference.runCount).toBe(7);
    for (const name of Object.keys(reference.runs))
      expect(reference.runs[name]?.status, name).toBe('completed');
    // Both levels report their sub-goals' progress: declared, each in progress, each completed.
    for (const name of ['root', 'root/lead_a', 'root/lead_b']) {
      const progress = progressOf(reference.runs[name]?.events ?? []);
      expect(progress.length, name).toBeGreaterThanOrEqual(3);
      expect(progress, name).toContain('2 of 2 sub-goals completed');
    }
  },
  points: [
    ['iteration.after_commit@2', "the boss's delegation to lead_a is recorded, its tool not run"],
    ['iteration.before_goals_commit@1', "lead_a's first goal is about to be moved by its helper's result"],
    ['tool.mid_call@3', "lead_a's declaration of its own sub-goals is in flight"],
    ['iteration.before_goals_commit@3', "lead_b's first goal is about to be moved by its helper's result"],
    ['iteration.after_goals_commit@2', "the boss's goal a, moved by lead_a's result, is recorded"],
  ],
  // One step in flight when the kill comes: it may lose one model call.
  extraModelCalls: 1,
});
