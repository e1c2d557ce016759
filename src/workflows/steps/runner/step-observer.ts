import type { Message, Part } from '../../../chat/index.js';
import type { Usage } from '../../../models/usage.js';
import type { QuestionRecord } from '../../question-record.js';
import type { RunRecord } from '../../run-record.js';

/**
 * What the steps report for traces and metrics (src/telemetry implements it; decision 0024). Absent from the
 * services when telemetry is off: a step then checks one property and builds nothing. Reports are made
 * where the work is done (a model call, a tool call, a run's last commit), never by replaying the journal,
 * so a step whose work was already recorded reports nothing.
 */
export interface StepObserver {
  modelCall(call: ModelCallReport): void;
  toolCall(call: ToolCallReport): void;
  /** The commit that finished the run was written (reported once, by the worker that wrote it). */
  runEnded(record: RunRecord): void;
  /** The first execution of the run's first step began. */
  runStarted(record: Pick<RunRecord, 'agent'>): void;
  /** One execution of a step job ended, however it ended. */
  stepEnded(step: StepReport): void;
  /** A model call had to wait for its provider's shared rate limit: its step was parked for `waitMs`. */
  rateLimited(provider: string, waitMs: number): void;
  /**
   * A question was closed by its own timeout, with its default answer, by this step's write (reported once:
   * the write that closes a question refuses a closed one).
   */
  questionTimedOut(question: QuestionRecord, at: string): void;
  /** The fields every log line of a step carries (its trace and span ids). */
  logFields(run: { run_id: string; root_run_id?: string | undefined }): Record<string, string>;
}

/** The run a report belongs to. */
export interface ObservedRun {
  id: string;
  root_run_id: string | null;
  session_id: string;
  /** Its tenant, whose token budget the call counts against (decision 0038); absent: `default`. */
  tenant?: string;
}

/** Why a call was made again: an earlier execution started it and died (takeover) or failed (retry). */
export type RepeatCause = 'takeover' | 'retry';

export interface ModelCallReport {
  run: ObservedRun;
  agent: string;
  /** The step job that made the call, and how many times it has been started (each execution its own span). */
  jobId: string;
  started: number;
  attempt: number;
  iteration: number;
  /** `chat`: the agent's own request; `summary`: a compaction's; `coordinator`: a team coordinator's. */
  purpose: 'chat' | 'summary' | 'coordinator';
  provider: { name: string; kind: string; model: string };
  startMs: number;
  endMs: number;
  usage: Usage | undefined;
  costUsd: number | undefined;
  /** The error code of a call that failed. */
  errorCode: string | undefined;
  /** Set when an earlier execution of the step had started this same call. */
  repeat: RepeatCause | undefined;
  /** What was sent and answered: only read when message content is captured. */
  messages: readonly Message[];
  reply: readonly Part[] | undefined;
}

export interface ToolCallReport {
  run: ObservedRun;
  agent: string;
  jobId: string;
  iteration: number;
  /** The name the model called: a name it made up when `toolKnown` is false. */
  toolName: string;
  /** The agent has a tool of that name (only then is the name a metric label). */
  toolKnown: boolean;
  toolCallId: string;
  /** From the call's recorded intent: a call that waited (a delegation, a question) spans the wait. */
  startMs: number;
  endMs: number;
  isError: boolean;
  repeat: RepeatCause | undefined;
  /** Only read when message content is captured. */
  arguments: string;
  result: string;
}

export interface StepReport {
  kind: string;
  shard: number;
  /**
   * How long the job waited in its queue before this execution: only for a job's first start that was not
   * added delayed (later starts follow a park, a backoff or a takeover).
   */
  queueWaitMs: number | undefined;
  durationMs: number;
  /** `done`, `parked`, `failed` (the attempt threw: a retry, a failure, a lost lock). */
  outcome: 'done' | 'parked' | 'failed';
}

/** Why the step's execution repeats a call an earlier execution started. */
export function repeatCauseOf(attempt: number): RepeatCause {
  return attempt > 1 ? 'retry' : 'takeover';
}
