import { expect } from 'vitest';
import type { HarnessAgent } from '../helpers/harness.js';
import { describeTreeCrashes } from '../helpers/run-tree.js';

/**
 * A supervisor declares two sub-goals and delegates them one after the other: the first one's result moves
 * its sub-goal in a commit of its own (goals:<n>) before the next request, the second one's finishes the run
 * with no model call. A worker SIGKILLed around those moves must leave the tree as a run without faults
 * does: each sub-goal moved once, each progress event there once.
 */
const agents: HarnessAgent[] = [
  {
    name: 'boss',
    script: {
      replies: [
        {
          tool_calls: [
            {
              name: 'declare_sub_goals',
              arguments: {
                sub_goals: [
                  { id: 'a', title: 'first' },
                  { id: 'b', title: 'second' },
                ],
              },
            },
          ],
        },
        {
          tool_calls: [
            { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'do a', sub_goal: 'a' } },
          ],
        },
        {
          tool_calls: [
            { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'do b', sub_goal: 'b' } },
          ],
        },
      ],
    },
    options: { supervisor: {} },
  },
  { name: 'helper', script: { default: { text: 'done', delay_ms: 100 } } },
];

describeTreeCrashes({
  title: "a supervisor's sub-goals move once, whatever a SIGKILL interrupts",
  options: { agents },
  start: { input: 'two things' },
  checkReference: (reference) => {
    expect(reference.result).toBe(
      'All 2 sub-goals are completed.\n\n[✓] a: first — done\n[✓] b: second — done',
    );
    const progress = reference.runs.root?.events.filter((event) => event.includes('"kind":"progress"'));
    expect(progress).toHaveLength(5);
  },
  points: [
    ['iteration.after_commit@1', 'the declaration was recorded, its tool not run'],
    ['tool.after_commit@2', "sub-goal a's delegation came back, its move not recorded"],
    ['iteration.before_goals_commit@1', "sub-goal a's move is about to be recorded"],
    ['iteration.after_goals_commit@1', "sub-goal a's move was recorded, the next request not made"],
    ['iteration.after_commit@6', 'the finishing commit (every sub-goal completed) was recorded'],
  ],
  extraModelCalls: 1,
});
