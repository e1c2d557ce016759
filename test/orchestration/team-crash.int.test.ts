import { expect } from 'vitest';
import type { HarnessAgent } from '../helpers/harness.js';
import { describeTreeCrashes } from '../helpers/run-tree.js';

/**
 * A team whose first role has two members acting at once (one calls a tool), then a writer. The worker is
 * SIGKILLed at a crash point of a turn and a fresh worker takes over: the team ends as without the crash,
 * one member run per turn, the shared chat in selection order, nothing duplicated.
 */
const agents: HarnessAgent[] = [
  {
    name: 'counter',
    script: {
      rules: [{ when: { role: 'tool' }, reply: { text: 'count: 7' } }],
      replies: [{ tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] }],
    },
  },
  { name: 'namer', script: { default: { text: 'name: seven', delay_ms: 150 } } },
  { name: 'writer', script: { default: { text: 'seven it is' } } },
];
const config = {
  teams: [
    {
      name: 'crew',
      members: [
        { agent: 'counter', role: 'research' },
        { agent: 'namer', role: 'research' },
        { agent: 'writer', role: 'write' },
      ],
      coordinator: { kind: 'role_round_robin', max_rounds: 1 },
    },
  ],
};
const start = { input: 'count and name', agent: 'crew' };

describeTreeCrashes({
  title: 'a team survives a SIGKILL anywhere in a turn',
  options: { agents, config },
  start,
  checkReference: (reference) => {
    expect(reference.result).toBe('seven it is');
    expect(Object.keys(reference.runs)).toEqual(['root', 'root/counter', 'root/namer', 'root/writer']);
  },
  points: [
    ['iteration.before_model_call@1', 'a member is mid-iteration, the other running too'],
    ['tool.mid_call@1', "a member's tool call is cut short"],
    ['team.before_turn_commit@1', 'both members finished, their answers not yet shared'],
    ['team.after_turn_commit@1', 'the turn was recorded, the next not yet enqueued'],
    ['iteration.after_commit@4', "the writer's answer is recorded, the team has not finished"],
  ],
  // Two members run at once: each may lose one model call to the kill.
  extraModelCalls: 2,
});
