import { runKeys, sessionKeys } from '../../redis/keys.js';
import type { SessionAccess } from '../../tools/index.js';
import type { ToolJobData } from '../job-data.js';
import { journalField } from '../journal.js';
import type { StepContext } from './step-context.js';
import { suspendUntil } from './tool-interaction.js';

/** ToolContext.session for one execution of a tool handler. */
export function sessionAccess(context: StepContext, data: ToolJobData): SessionAccess {
  const { services } = context;
  const journal = runKeys(services.space, data.session_id, data.run_id).journal;
  const shard = sessionKeys(services.space, data.session_id).shard;
  return {
    redis: services.redis,
    space: services.space,
    jobId: context.jobId,
    now: services.now,
    recheckMs: services.questionRecheckMs,
    async park(wakeAt, waitingFor, recheck) {
      // Marks the call as parked: its next execution is a wake-up, not the rerun of a call a crash cut short.
      await services.redis.hset(journal, journalField.parked(context.jobId), String(wakeAt));
      return suspendUntil(wakeAt, waitingFor, recheck);
    },
    wake: (jobId) => services.engine.queues.wake(shard, jobId),
  };
}
