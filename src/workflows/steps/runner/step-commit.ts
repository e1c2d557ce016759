import type { Message } from '../../../chat/index.js';
import type { StoredEvent } from '../../../events/event.js';
import type { CommitPlan } from '../../core/run-commits.js';
import type { IterationJobData, TeamTurnJobData, ToolJobData } from '../../job-data.js';
import type { ToolIntent, ToolOutcomeEntry } from '../../journal.js';
import type { RunRecord, RunStatus } from '../../run-record.js';

/**
 * The fenced writes a step asks its store for (step-store.ts), as the step names them: what is written, never
 * where. The store adds where (its run, its chat, its job's lock and token) and picks the keys.
 */

/** A step that is to be added (idempotent: every step job's id derives from its place in the run). */
export type NextStep =
  | { kind: 'iteration'; data: IterationJobData }
  | { kind: 'tools'; calls: readonly ToolJobData[] }
  | { kind: 'team_turn'; data: TeamTurnJobData }
  /** Wakes the step that waits for this run, when it is a child run (see StepQueues.wakeParent). */
  | { kind: 'wake_parent'; run: Pick<RunRecord, 'session_id' | 'parent'> };

/** How a fenced write ended. */
export type CommitResult =
  | {
      status: 'ok';
      eventIds: string[];
      completedBatch?: boolean;
      /** The commit added the `next` steps it named in its own write (decision 0051): nothing to add after it. */
      enqueued?: boolean;
    }
  | { status: 'done'; value: string }
  | { status: 'lock_lost' }
  | { status: 'no_run' }
  | { status: 'run_finished'; runStatus: RunStatus }
  | { status: 'conflict'; what: string };

/** A run commit (commit-step): the journal field it writes once, and the plan. */
export interface CommitRequest<JournalValue> {
  journalField: string;
  plan: CommitPlan<JournalValue>;
  /** Run revision the plan was computed from; omitted when the commit does not depend on it. */
  expectedRev?: number;
  /** Chat length the plan's message indexes were computed from. */
  expectedChatLength?: number;
  /**
   * Whose usage sums the plan's usage is added to besides the run's, when it adds usage: the agent's (its
   * sums on the run's shard) and the run tree's, kept on its root run (the root's run budget covers the tree).
   */
  usageSums?: { agent?: string; treeRoot: string };
  /** The chat's new context view (JSON), written with the commit (a compaction); absent: unchanged. */
  view?: string;
  /**
   * The steps that follow the commit, added in its write when the store can (decision 0051: the result says
   * `enqueued`); otherwise the step adds them after it, as before.
   */
  next?: readonly NextStep[];
}

/**
 * The messages steered into a run, appended before an iteration's model call (commit-steers, decision 0032):
 * the first `steeredIds.length` of the run's steered messages, taken off the list in the same write.
 */
export interface SteerCommit {
  journalField: string;
  journal: unknown;
  steeredIds: string[];
  expectedChatLength: number;
  messages: Message[];
  events: StoredEvent[];
}

/** A tool call's outcome; the one that completes its batch appends every result (commit-tool-outcome). */
export interface ToolOutcomeCommit {
  iteration: number;
  index: number;
  calls: number;
  replyIndex: number;
  outcome: ToolOutcomeEntry;
  /** The call's result message and its message_added event, appended when the batch is complete. */
  message: Message;
  messageAdded: StoredEvent;
  /** Added at once: tool_call_end (and tool_call_start when the call never started). */
  events: StoredEvent[];
  /** The next iteration, added in the write that completes the batch when the store can (decision 0051). */
  next?: readonly NextStep[];
}

/** A tool call's intent and start event, or what an earlier attempt left (begin-tool-call). */
export interface BeginToolCall {
  iteration: number;
  index: number;
  replyIndex: number;
  intent: ToolIntent;
  /** Envelope of the tool_call_start event the script builds from the call. */
  runId: string;
  agent: string;
  time: string;
}

export type BeginToolCallResult =
  | Exclude<CommitResult, { status: 'ok' } | { status: 'conflict' }>
  | { status: 'no_reply' }
  | { status: 'interrupted'; intent: string; call: string }
  | { status: 'started'; call: string };
