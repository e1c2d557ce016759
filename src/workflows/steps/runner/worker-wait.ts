import type { RunRecord } from '../../run-record.js';
import type { StepContext } from './step-context.js';

/**
 * A step that loaded its run recorded as `waiting_for_worker` runs on a worker that serves it, whether or not
 * one of that worker's looks saw the step waiting (it may have taken the step off its recheck timer first):
 * the run's wait ends here, with its worker_found event, before the step does anything, and the caller loads
 * the run again. A normal step reads what it read before: the record's status is in the load it makes anyway.
 * True when the wait was ended (or found ended): load again.
 */
export async function endedWorkerWait(
  context: StepContext,
  record: Pick<RunRecord, 'status' | 'id'>,
): Promise<boolean> {
  const end = context.services.endWorkerWait;
  if (record.status !== 'waiting_for_worker' || !end) return false;
  await end(context.jobId, context.sessionId, record.id);
  return true;
}
