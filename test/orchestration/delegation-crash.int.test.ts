import { expect } from 'vitest';
import type { HarnessAgent } from '../helpers/harness.js';
import { describeTreeCrashes } from '../helpers/run-tree.js';

/**
 * A lead spawns two children: `alpha` calls a tool and answers, `beta` answers at once. The worker is
 * SIGKILLed at a crash point somewhere in the tree and a fresh worker process takes over; the tree must end
 * as it does without the crash: the same answers, one child run per delegation, nothing duplicated.
 */
const agents: HarnessAgent[] = [
  {
    name: 'lead',
    script: {
      rules: [{ when: { role: 'tool' }, reply: { text: 'all done' } }],
      replies: [
        {
          tool_calls: [
            {
              name: 'spawn_agents',
              arguments: {
                tasks: [
                  { agent: 'alpha', task: 'task A' },
                  { agent: 'beta', task: 'task B' },
                ],
              },
            },
          ],
        },
      ],
    },
  },
  {
    name: 'alpha',
    script: {
      rules: [{ when: { role: 'tool' }, reply: { text: 'A is 5' } }],
      replies: [{ tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }],
    },
  },
  { name: 'beta', script: { default: { text: 'B done', delay_ms: 200 } } },
];
const start = { input: 'split the work' };

describeTreeCrashes({
  title: 'a delegation tree survives a SIGKILL anywhere',
  options: { agents },
  start,
  checkReference: (reference) => {
    expect(reference.result).toBe('all done');
    expect(Object.keys(reference.runs)).toEqual(['root', 'root/alpha', 'root/beta']);
    expect(reference.runCount).toBe(3);
  },
  points: [
    // Model calls: 1 = lead, 2 and 3 = the children's first iterations.
    ['iteration.before_model_call@2', 'a child run is mid-iteration, both children running'],
    ['iteration.after_model_call@3', 'a child got its model reply but did not record it'],
    ['tool.mid_call@1', 'the parent is starting its children'],
    // Iteration commits: 1 = lead, then the children's (beta's final answer is one of 2..4).
    ['iteration.after_commit@3', 'a child just committed, the parent has not resumed'],
    ['iteration.after_commit@4', 'the last child just finished, the parent has not resumed'],
    ['tool.after_commit@2', "the parent's spawn call just recorded the children's answers"],
  ],
  // The two children run at once: each may lose one model call to the kill.
  extraModelCalls: 2,
});
