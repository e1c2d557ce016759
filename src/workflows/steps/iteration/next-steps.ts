import { toolJobsOf } from '../../job-data.js';
import type { ReplyEntry } from '../../journal.js';
import { runGroup } from '../runner/agent-runtime.js';
import type { NextStep } from '../runner/step-action.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * What a recorded reply leads to, read by the reply's commit (which adds the steps in its write, decision
 * 0051) and by the stages after it: the remember stage (the notes to keep) and the schedule stage.
 */

/** The reply asked the agent's memory to keep notes (the remember stage writes them). */
export function hasNotes(entry: ReplyEntry | undefined): boolean {
  return entry?.after?.decisions.some((decision) => decision.remember !== undefined) === true;
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
  if (entry.decision === 'retry' || entry.decision === 'ask') {
    // The answer was sent back (the feedback is in the chat), or an effect asked the person about it: the
    // next iteration (which waits for the answer first) answers again.
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
    // What the run inherited when it started (decision 0047): its tools are resolved with it too.
    ...(data.inherited ? { inherited: data.inherited } : {}),
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
