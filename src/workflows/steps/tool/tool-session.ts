import type { SessionAccess } from '../../../tools/index.js';
import type { ToolJobData } from '../../job-data.js';
import { park } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import { suspensionOf } from './tool-interaction.js';

/** ToolContext.session for one execution of a tool handler. */
export function sessionAccess(context: StepContext, data: ToolJobData): SessionAccess {
  const { services } = context;
  return {
    // Built on first use: most tools never touch the session's data.
    get data() {
      return context.store.sessionData;
    },
    jobId: context.jobId,
    now: services.now,
    recheckMs: services.questionRecheckMs,
    deadlineMs: context.deadlineMs,
    park: async (wakeAt, waitingFor, recheck) => suspensionOf(park(wakeAt, recheck), waitingFor),
    wake: (jobId) => services.scheduler.wake(data.session_id, jobId),
  };
}
