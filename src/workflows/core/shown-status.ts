import type { RunStatus } from '../run-record.js';

/** A run's status as clients see it: `waiting_input` is not stored (see RunView). */
export type ShownStatus = RunStatus | 'waiting_input';

/**
 * A queued or running run held up by pending questions waits for input; any other status is shown as
 * stored. One rule for a run's view, its tree and (in Lua, includes/run-index.lua) the run index.
 */
export function shownStatus(status: RunStatus, pendingQuestions: number): ShownStatus {
  return pendingQuestions > 0 && (status === 'running' || status === 'queued') ? 'waiting_input' : status;
}
