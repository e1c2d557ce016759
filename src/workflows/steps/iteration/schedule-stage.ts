import { RatchetError } from '../../../errors/index.js';
import { toolJobsOf } from '../../job-data.js';
import type { ReplyEntry } from '../../journal.js';
import { runGroup } from '../runner/agent-runtime.js';
import { enqueue, type NextStep, type StepAction, wakeParent } from '../runner/step-action.js';
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

/**
 * The steps a reply recorded as `entry`, made by `sender`, asks for, to run under the definition the reply
 * was made under (an upgrade commits with the reply): its tool calls, or the next iteration when the answer
 * was sent back; none (undefined) for a final answer or a failure.
 */
export function nextStepsOf(
  turn: Turn,
  entry: ReplyEntry,
  sender: string,
  definition: string | undefined,
): NextStep[] | undefined {
  const { context, data } = turn;
  const { record } = turn.stored;
  const pinned = definition === undefined ? {} : { definition };
  if (entry.decision === 'retry') {
    // The answer was sent back (the feedback is in the chat): the next iteration answers again.
    return [
      { kind: 'iteration', data: { ...data, iteration: data.iteration + 1, previous_calls: 0, ...pinned } },
    ];
  }
  if (entry.decision !== 'tools') return undefined;
  const place = {
    session_id: data.session_id,
    run_id: data.run_id,
    // A handoff group's member in control made the calls: its tools run them.
    agent: sender,
    ...(runGroup(context.services, record.agent, turnDefinition(turn)) ? { group: record.agent } : {}),
    chat_id: record.chat_id,
    lineage: record.lineage,
    ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
    ...(record.root_run_id ? { root_run_id: record.root_run_id } : {}),
    ...pinned,
  };
  return [
    {
      kind: 'tools',
      calls: toolJobsOf(
        place,
        data.iteration,
        entry.index,
        entry.tool_calls.map((call) => call.name),
      ),
    },
  ];
}
