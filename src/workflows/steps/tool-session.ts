import { runKeys, sessionKeys } from '../../redis/keys.js';
import type { SessionAccess } from '../../tools/index.js';
import type { ToolJobData } from '../job-data.js';
import { journalField } from '../journal.js';
import { execPipeline } from '../store.js';
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
    async park(wakeAt, waitingFor) {
      // Marks the call as parked: its next execution is a wake-up, not the rerun of a call a crash cut short.
      await services.redis.hset(journal, journalField.parked(context.jobId), String(wakeAt));
      return suspendUntil(wakeAt, waitingFor);
    },
    wake: (jobId) => services.engine.queues.wake(shard, jobId),
  };
}

/** The call's handler parked before (asked a question or waited), so an earlier attempt was not cut short. */
export async function parkedBefore(
  context: StepContext,
  data: ToolJobData,
  questionId: string,
): Promise<boolean> {
  const { services } = context;
  const [asked, parked] = (await execPipeline(
    services.redis
      .pipeline()
      .hexists(sessionKeys(services.space, data.session_id).questions, questionId)
      .hexists(
        runKeys(services.space, data.session_id, data.run_id).journal,
        journalField.parked(context.jobId),
      ),
  )) as [number, number];
  return asked === 1 || parked === 1;
}
