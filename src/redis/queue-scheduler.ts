import type { RunCreation } from '../workflows/core/run-creation.js';
import type { IterationJobData, TeamTurnJobData, ToolJobData } from '../workflows/job-data.js';
import type { RunRecord } from '../workflows/run-record.js';
import type { StepScheduler } from '../workflows/step-scheduler.js';
import { type KeySpace, runKeys, shardOf } from './keys.js';
import type { RunWriter } from './run-writer.js';
import type { StepQueues } from './step-queues.js';

/** The scheduler of a worker: the step queues of every shard, and the engine's cancellation. */
export class QueueScheduler implements StepScheduler {
  constructor(
    private readonly queues: StepQueues,
    private readonly runWriter: RunWriter,
    private readonly space: KeySpace,
    private readonly cancel: (runId: string, reason: string) => Promise<unknown>,
  ) {}

  addIteration(data: IterationJobData): Promise<void> {
    return this.queues.addIteration(shardOf(this.space, data.session_id), data);
  }

  async addToolCalls(calls: readonly ToolJobData[]): Promise<void> {
    // The calls of one reply, of one session; none to add when the reply made none.
    const [first] = calls;
    if (first) await this.queues.addToolCalls(shardOf(this.space, first.session_id), calls);
  }

  addTeamTurn(data: TeamTurnJobData): Promise<void> {
    return this.queues.addTeamTurn(shardOf(this.space, data.session_id), data);
  }

  wake(sessionId: string, jobId: string): Promise<void> {
    return this.queues.wake(shardOf(this.space, sessionId), jobId);
  }

  wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): Promise<void> {
    return this.queues.wakeParent(run);
  }

  startChildRun(input: { plan: RunCreation; chatLength: number; parentRunId: string }) {
    return this.runWriter.write({
      plan: input.plan,
      chatLength: input.chatLength,
      parent: runKeys(this.space, input.plan.record.session_id, input.parentRunId),
    });
  }

  cancelRun(runId: string, reason: string): Promise<unknown> {
    return this.cancel(runId, reason);
  }
}
