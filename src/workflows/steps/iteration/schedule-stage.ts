import { RatchetError } from '../../../errors/index.js';
import { toolJobsOf } from '../../job-data.js';
import { runGroup } from '../runner/agent-runtime.js';
import { enqueue, type StepAction, wakeParent } from '../runner/step-action.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The last stage: what a recorded reply asks for — its tool calls, another answer (sent back by the output
 * guardrail), or (a final answer or a failure) the parent run's wake-up. Read from the recorded entry, so a
 * repeated step schedules what the first one decided.
 */
export function scheduleStage(turn: Turn): StepAction {
  const { context, data, recorded } = turn;
  if (!recorded) {
    throw new RatchetError('internal', `iteration ${data.iteration} of ${data.run_id} has no recorded reply`);
  }
  const { entry, sender } = recorded;
  // Where the run stands (its agent, chat, lineage, deadline, root): the reply's commit does not move it.
  const { record } = turn.stored;
  if (entry.decision === 'retry' || entry.decision === 'ask') {
    // The answer was sent back (the feedback is in the chat), or an effect asked the person about it: the
    // next iteration (which waits for the answer first) answers again.
    return enqueue(
      [
        {
          kind: 'iteration',
          data: {
            ...data,
            iteration: data.iteration + 1,
            previous_calls: 0,
            ...definitionOf(turn),
          },
        },
      ],
      {
        after: 'iteration.after_enqueue',
      },
    );
  }
  if (entry.decision !== 'tools') return wakeParent(record);
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
    // The definition the reply was made under (an upgrade commits with the reply): its tools run under it.
    ...definitionOf(turn),
  };
  return enqueue(
    [
      {
        kind: 'tools',
        calls: toolJobsOf(
          place,
          data.iteration,
          entry.index,
          entry.tool_calls.map((call) => call.name),
        ),
      },
    ],
    { after: 'iteration.after_enqueue' },
  );
}

/** The definition the reply was made under (an upgrade commits with the reply): what comes next runs under it. */
function definitionOf(turn: Turn): { definition?: string } {
  const definition = turn.recorded?.definition ?? turnDefinition(turn);
  return definition === undefined ? {} : { definition };
}
