import { type KeySpace, runKeys } from '../redis/keys.js';
import type { RunCreation } from './core/run-creation.js';
import type { IterationJobData, TeamTurnJobData, ToolJobData } from './job-data.js';
import type { RunRecord } from './run-record.js';
import { type RunWriteCode, writeRun } from './run-writer.js';
import type { StepQueues } from './step-queues.js';

/**
 * The narrow port through which steps move runs on: add the next iteration, a reply's tool calls, a team
 * turn, a child run; wake a parked step; cancel a run (the siblings of a child that failed). Steps never see
 * the client face of the engine (start, read, answer, delete), nor the queues behind this port.
 */
export interface StepScheduler {
  addIteration(shard: number, data: IterationJobData): Promise<void>;
  /** One job per tool call of a reply; they run in parallel. */
  addToolCalls(shard: number, calls: readonly ToolJobData[]): Promise<void>;
  addTeamTurn(shard: number, data: TeamTurnJobData): Promise<void>;
  /** Wakes a step parked in the delayed set; a step not parked is left alone. */
  wake(shard: number, jobId: string): Promise<void>;
  /** Wakes the step that waits for this run, when it is a child run; nothing for a root run. */
  wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): Promise<void>;
  /** Writes a child run and adds its first step in one transaction (see writeRun). */
  startChildRun(input: {
    plan: RunCreation;
    chatLength: number;
    /** The parent run (of the same session): the child is recorded among its children. */
    parentRunId: string;
  }): Promise<{ code: RunWriteCode; detail: string | undefined }>;
  /** Cancels a run and its children: its state, its queued steps, and a broadcast to every worker. */
  cancelRun(runId: string, reason: string): Promise<unknown>;
}

/** The scheduler of a worker: the step queues of every shard, and the engine's cancellation. */
export class QueueScheduler implements StepScheduler {
  constructor(
    private readonly queues: StepQueues,
    private readonly space: KeySpace,
    private readonly eventsMaxLength: number,
    private readonly cancel: (runId: string, reason: string) => Promise<unknown>,
  ) {}

  addIteration(shard: number, data: IterationJobData): Promise<void> {
    return this.queues.addIteration(shard, data);
  }

  addToolCalls(shard: number, calls: readonly ToolJobData[]): Promise<void> {
    return this.queues.addToolCalls(shard, calls);
  }

  addTeamTurn(shard: number, data: TeamTurnJobData): Promise<void> {
    return this.queues.addTeamTurn(shard, data);
  }

  wake(shard: number, jobId: string): Promise<void> {
    return this.queues.wake(shard, jobId);
  }

  wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): Promise<void> {
    return this.queues.wakeParent(run);
  }

  startChildRun(input: { plan: RunCreation; chatLength: number; parentRunId: string }) {
    return writeRun({
      queues: this.queues,
      space: this.space,
      plan: input.plan,
      chatLength: input.chatLength,
      eventsMaxLength: this.eventsMaxLength,
      parent: runKeys(this.space, input.plan.record.session_id, input.parentRunId),
    });
  }

  cancelRun(runId: string, reason: string): Promise<unknown> {
    return this.cancel(runId, reason);
  }
}
