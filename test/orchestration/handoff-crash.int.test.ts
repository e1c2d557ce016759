import { expect } from 'vitest';
import type { HarnessAgent } from '../helpers/harness.js';
import { describeTreeCrashes } from '../helpers/run-tree.js';

/**
 * A handoff chain (triage → flights → hotels) killed at a crash point around a transfer: who is in control
 * is read from the chat, so the run taken over continues with the same member and ends the same way.
 */
const transfer = (to: string) => ({ tool_calls: [{ name: `transfer_to_${to}`, arguments: {} }] });
const agents: HarnessAgent[] = [
  { name: 'triage', script: { rules: [{ when: { role: 'user' }, reply: transfer('flights') }] } },
  {
    name: 'flights',
    script: {
      rules: [{ when: { role: 'tool', contains: 'transferred to flights' }, reply: transfer('hotels') }],
    },
  },
  {
    name: 'hotels',
    script: {
      rules: [{ when: { role: 'tool', contains: 'transferred to hotels' }, reply: { text: 'all booked' } }],
    },
  },
];
const config = { handoffs: [{ name: 'support', members: ['triage', 'flights', 'hotels'] }] };
const start = { input: 'book a trip', agent: 'support' };

describeTreeCrashes({
  title: 'a handoff chain survives a SIGKILL around a transfer',
  options: { agents, config },
  start,
  checkReference: (reference) => {
    expect(reference.result).toBe('all booked');
  },
  points: [
    ['tool.before_commit@1', 'the first transfer ran, its result not recorded'],
    ['tool.after_commit@1', 'the first transfer recorded, the next member not yet called'],
    ['iteration.after_model_call@2', 'the new member got its reply, not recorded'],
  ],
  extraModelCalls: 1,
});
