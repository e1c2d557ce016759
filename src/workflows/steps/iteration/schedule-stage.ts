import { RatchetError } from '../../../errors/index.js';
import { enqueue, type StepAction, wakeParent } from '../runner/step-action.js';
import { nextStepsOf } from './next-steps.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The last stage: what a recorded reply asks for — its tool calls, another answer (sent back by the output
 * guardrail), or (a final answer or a failure) the parent run's wake-up. Read from the recorded entry, so a
 * repeated step schedules what the first one decided. The steps the reply's commit added in its write
 * (decision 0051) are not added again; the crash point stays where the step adds them.
 */
export function scheduleStage(turn: Turn): StepAction {
  const { data, recorded } = turn;
  if (!recorded) {
    throw new RatchetError('internal', `iteration ${data.iteration} of ${data.run_id} has no recorded reply`);
  }
  const { entry, sender } = recorded;
  const next = nextStepsOf(turn, entry, sender, recorded.definition ?? turnDefinition(turn));
  // Where the run stands (its agent, chat, lineage, deadline, root): the reply's commit does not move it.
  if (!next) return wakeParent(turn.stored.record);
  return enqueue(recorded.enqueued ? [] : next, { after: 'iteration.after_enqueue' });
}
