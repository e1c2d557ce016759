import type { Usage } from '../models/usage.js';
import { type ListedRunStatus, listedRunStatusSchema } from './run-record.js';
import type { QueuedReason } from './views.js';

export type { ListedRunStatus };

/**
 * What the run index lists (GET /v1/runs): a run's identity and listed status, from the index, so which runs
 * a page holds costs the same whatever the runs hold. `waiting_input` is listed for a queued or running run
 * with a pending question (its own, or for a root run one of its tree's), as a run's own view shows it.
 */
export const listedRunStatuses: readonly ListedRunStatus[] = listedRunStatusSchema.options;

export interface RunListing {
  id: string;
  session_id: string;
  agent: string;
  status: ListedRunStatus;
  /** The root of a child run's tree; null for a run started by a client. */
  root_run_id: string | null;
  created_at: string;
  /**
   * The rest is read from the page's run records (one batched read per shard, after the page is chosen):
   * null when a record is gone (expired since) or does not parse, so one bad record does not hide the page.
   */
  iterations: number | null;
  usage: Usage | null;
  cost_usd: number | null;
  started_at: string | null;
  updated_at: string | null;
  /** Null while the run is not finished. */
  finished_at: string | null;
  /** The first line of the run's input (RunRecord.input_line). */
  input_line: string | null;
  /** From its creation to its end, or to now while it is not finished (runDurationMs). */
  duration_ms: number | null;
  /**
   * A root run's usage with that of every run below it (delegations, team members), summed on the root as
   * the runs commit; null for a child run (its tree, GET /v1/runs/:id/tree, sums the runs below it).
   */
  tree_usage: UsageWithCost | null;
  /** The run's tenant (decision 0035), from its record. */
  tenant: string | null;
  /** While a root run waits for fair admission (decision 0038): why; read from the admission keys. */
  queued_reason: QueuedReason | null;
}

/** Usage and what it cost. */
export type UsageWithCost = Usage & { cost_usd: number };

/** What the run index itself knows of a run (RunListing without what its record adds). */
export type IndexedRun = Pick<
  RunListing,
  'id' | 'session_id' | 'agent' | 'status' | 'root_run_id' | 'created_at'
>;

/**
 * A place in the newest-first order of runs: `<created ms, 13 digits>:<run id>`. Every run has one place,
 * which never changes, so paging from one goes on strictly after it whatever is created or finished meanwhile.
 */
export type RunPosition = string;

export interface RunFilter {
  statuses?: readonly ListedRunStatus[];
  agent?: string;
  sessionId?: string;
  /** true: runs started by a client only; false: child runs only. */
  root?: boolean;
  /** Created at or after (ms since the epoch). */
  sinceMs?: number;
  /** Created at or before (ms since the epoch). */
  untilMs?: number;
  /** The run id starts with this. */
  idPrefix?: string;
  /** The run's input line holds this (compared in lower case). */
  text?: string;
  /** Runs of this tenant only, read from its own index (decision 0048). */
  tenant?: string;
  limit: number;
  /** Continue strictly after this place. */
  after?: RunPosition;
}

export interface RunPage {
  runs: RunListing[];
  /** Where the next page starts; null when there is nothing more. */
  next: RunPosition | null;
}

/** Runs per listed status (created since `sinceMs` when given). */
export type RunCounts = Record<ListedRunStatus, number>;

export interface SessionListing {
  id: string;
  agent: string;
  status: 'idle' | 'active';
  active_run_id: string | null;
  created_at: string;
  /** When a run of it was last created or finished (when it was created, before its first run). */
  last_active_at: string;
}

/** A place in the order of sessions by last activity: `<activity ms>:<session id>`. */
export type SessionPosition = string;

export interface SessionFilter {
  status?: 'idle' | 'active';
  agent?: string;
  /** Last active at or after (ms). */
  sinceMs?: number;
  /** Last active at or before (ms). */
  untilMs?: number;
  idPrefix?: string;
  limit: number;
  after?: SessionPosition;
}

export interface SessionPage {
  sessions: SessionListing[];
  next: SessionPosition | null;
}

export function runPosition(createdMs: number, runId: string): RunPosition {
  return `${String(createdMs).padStart(13, '0')}:${runId}`;
}
