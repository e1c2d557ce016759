import type { RunCreation } from './core/run-creation.js';
import type { IterationJobData, TeamTurnJobData, ToolJobData } from './job-data.js';
import type { RunRecord } from './run-record.js';

/** How writing a new run ended: written, or refused (and why). */
export type RunWriteCode =
  | 'OK'
  | 'NO_SESSION'
  | 'SESSION_BUSY'
  | 'QUEUE_WAITING'
  | 'RUN_EXISTS'
  | 'CONFLICT'
  | 'PARENT_FINISHED'
  | 'IDEMPOTENT'
  | 'IDEMPOTENCY_MISMATCH';

/**
 * The narrow port through which steps move runs on: add the next iteration, a reply's tool calls, a team
 * turn, a child run; wake a parked step; cancel a run (the siblings of a child that failed). Steps never see
 * the client face of the engine (start, read, answer, delete), nor the queues behind this port.
 */
export interface StepScheduler {
  /** Each step goes to the queue of its session's shard (the scheduler's business, not the step's). */
  addIteration(data: IterationJobData): Promise<void>;
  /** One job per tool call of a reply; they run in parallel. */
  addToolCalls(calls: readonly ToolJobData[]): Promise<void>;
  addTeamTurn(data: TeamTurnJobData): Promise<void>;
  /** Wakes a step of the session parked in the delayed set; a step not parked is left alone. */
  wake(sessionId: string, jobId: string): Promise<void>;
  /** Wakes the step that waits for this run, when it is a child run; nothing for a root run. */
  wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): Promise<void>;
  /** Writes a child run and adds its first step in one transaction, or neither when refused (see RunWriter). */
  startChildRun(input: {
    plan: RunCreation;
    chatLength: number;
    /** The parent run (of the same session): the child is recorded among its children. */
    parentRunId: string;
  }): Promise<{ code: RunWriteCode; detail: string | undefined }>;
  /** Cancels a run and its children: its state, its queued steps, and a broadcast to every worker. */
  cancelRun(runId: string, reason: string): Promise<unknown>;
}
