import type { CrashPointName } from '../../crash-points.js';
import type { RunRecord } from '../../run-record.js';
import type {
  BeginToolCall,
  BeginToolCallResult,
  CommitRequest,
  CommitResult,
  NextStep,
  SteerCommit,
  ToolOutcomeCommit,
} from './step-commit.js';

export type { NextStep } from './step-commit.js';

/** A fenced write a step asks the runner to make, and what it says about the result. */
export type StepCommit =
  /** A run commit (commit-step.lua): journal field, record, messages, events. */
  | { op: 'run'; request: CommitRequest<unknown> }
  /** A tool call's intent and start event, or what an earlier attempt left (begin-tool-call.lua). */
  | { op: 'begin_tool'; request: BeginToolCall }
  /** A tool call's outcome; the one that completes its batch appends the results (commit-tool-outcome.lua). */
  | { op: 'tool_outcome'; request: ToolOutcomeCommit }
  /** Messages steered into the run, before an iteration's model call (commit-steers.lua). */
  | { op: 'steer'; request: SteerCommit };

/** What the runner hands the step after a commit (never `lock_lost`: then the runner throws). */
export type CommitOutcome<Commit extends StepCommit> = Exclude<ResultOf<Commit>, { status: 'lock_lost' }>;

type ResultOf<Commit extends StepCommit> = Commit extends { op: 'begin_tool' }
  ? BeginToolCallResult
  : CommitResult;

type Continue = () => StepAction | Promise<StepAction>;

/**
 * What a step asks the runner (step-runner.ts) to do next, as data. A step never commits, enqueues, parks or
 * checks its ownership itself: it returns one of these, and the runner does it, fires the crash points named
 * here, and hands the result to `andThen` for the step's next decision. So the lifecycle of every kind — commit
 * → ownership check → enqueue → crash points → park — is one piece of code.
 */
export type StepAction =
  /** The step did what it had to. */
  | { kind: 'done' }
  /** The step waits: park it (no worker held) until `wakeAt`, or until what it waits for wakes it. */
  | { kind: 'park'; wakeAt: number; recheck: (() => Promise<boolean>) | undefined }
  | {
      kind: 'commit';
      commit: StepCommit;
      /** For the error when the write is refused because another worker owns the job now. */
      what: string;
      before: CrashPointName | undefined;
      after: CrashPointName | undefined;
      andThen: (result: never) => StepAction | Promise<StepAction>;
    }
  | {
      kind: 'enqueue';
      next: readonly NextStep[];
      before: CrashPointName | undefined;
      after: CrashPointName | undefined;
      andThen: Continue | undefined;
    };

export type Park = Extract<StepAction, { kind: 'park' }>;

export const done: StepAction = { kind: 'done' };

/** The step waits until `wakeAt`; `recheck` (run once parked) says whether what it waits for came meanwhile. */
export function park(wakeAt: number, recheck?: () => Promise<boolean>): Park {
  return { kind: 'park', wakeAt, recheck };
}

export function isPark(value: unknown): value is Park {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'park';
}

/** Commit this, then decide on its result (a `lock_lost` result never reaches `andThen`: the runner throws). */
export function commit<Commit extends StepCommit>(
  write: Commit,
  options: {
    what: string;
    before?: CrashPointName;
    after?: CrashPointName;
    andThen: (result: CommitOutcome<Commit>) => StepAction | Promise<StepAction>;
  },
): StepAction {
  return {
    kind: 'commit',
    commit: write,
    what: options.what,
    before: options.before,
    after: options.after,
    andThen: options.andThen as (result: never) => StepAction,
  };
}

/** Add these steps, then go on (by default the step is done). */
export function enqueue(
  next: readonly NextStep[],
  options: { before?: CrashPointName; after?: CrashPointName; andThen?: Continue } = {},
): StepAction {
  return { kind: 'enqueue', next, before: options.before, after: options.after, andThen: options.andThen };
}

/** Wakes the parent step of a child run (nothing for a root run), then the step is done. */
export function wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): StepAction {
  return run.parent ? enqueue([{ kind: 'wake_parent', run }]) : done;
}
