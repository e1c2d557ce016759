import type { PendingMessage } from './pending-message.js';
import type { QuestionRecord } from './question-record.js';
import type { RunRecord, RunStatus, SubGoal } from './run-record.js';
import type { SessionRecord } from './session-record.js';

export interface Progress {
  fraction: number | null;
  message: string;
  at: string;
  /** A supervisor's sub-goals: its progress is theirs. */
  sub_goals?: SubGoal[];
}

/**
 * A run as clients see it. `waiting_input` is not stored: a running run with a pending question is
 * waiting for input (several branches may wait at once; each answer resumes only the one that asked).
 */
export type RunView = Omit<RunRecord, 'status'> & {
  status: RunStatus | 'waiting_input';
  pending_question: QuestionRecord | null;
  progress: Progress | null;
  /** What the run's parked tool calls wait for (wait_for_event, sleep) and until when (decision 0033). */
  waiting: RunWait[];
  /** While a root run waits for fair admission (decision 0038): why. */
  queued_reason?: QueuedReason | null;
};

/** Why a queued root run waits for its admission (decision 0038). */
export interface QueuedReason {
  /** `tenant_limit`: its tenant has max_active_runs active; `deployment_limit`: the deployment's cap is reached. */
  reason: 'tenant_limit' | 'deployment_limit';
  message: string;
  /** Runs of its tenant ahead of it (0: the next of its tenant). */
  ahead: number;
}

/** A wait of a run: for an event (at most until its timeout) or a sleep (until it ends). */
export interface RunWait {
  kind: 'event' | 'sleep';
  /** The event's name; null for a sleep. */
  event: string | null;
  since: string;
  /** When the sleep ends or the wait times out. */
  until: string;
}

export type SessionView = SessionRecord & {
  status: 'idle' | 'active';
  active_run_id: string | null;
  usage: UsageTotals;
  /** The messages waiting to become its next runs, oldest first (decision 0032); read with the session. */
  queued_messages?: PendingMessage[];
};

/** Usage summed over runs (a session's, or an agent's). */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  requests: number;
  cost_usd: number;
}

export function usageTotalsOf(fields: Readonly<Record<string, string>>): UsageTotals {
  const read = (name: string) => Number(fields[name] ?? 0);
  return {
    input_tokens: read('input_tokens'),
    output_tokens: read('output_tokens'),
    cached_input_tokens: read('cached_input_tokens'),
    requests: read('requests'),
    cost_usd: read('cost_usd'),
  };
}
