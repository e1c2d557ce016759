import { hash } from 'node:crypto';

/**
 * The ids of a run's spans, derived from ids every worker already has (decision 0024): the trace from the
 * root of the run's tree, each span from what it stands for. Any worker, after any crash, takeover, parking
 * or Redis restart, names the same span the same way, so nothing about a trace needs storing.
 */

/** A run as far as its trace is concerned: its id and the root of its tree (null for a root run). */
export interface TracedRun {
  id: string;
  root_run_id: string | null;
}

function digest(text: string, hexLength: number): string {
  const hex = hash('sha256', text, 'hex').slice(0, hexLength);
  // All-zero ids are invalid in W3C trace context; a sha256 prefix is all zeros with probability 2^-64.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/**
 * The last ids derived, by what they were derived from: a run's steps name its trace and its run span again
 * and again, and a worker has a bounded number of runs in flight. Emptied whole when full.
 */
const recent = new Map<string, string>();
const recentLimit = 4096;

function remembered(key: string, hexLength: number): string {
  let id = recent.get(key);
  if (id === undefined) {
    if (recent.size >= recentLimit) recent.clear();
    id = digest(key, hexLength);
    recent.set(key, id);
  }
  return id;
}

/** The trace of a run: one per run tree, so a child run is in its parent's trace. 32 hex digits. */
export function traceIdOf(run: TracedRun): string {
  return remembered(`ratchet-trace/${run.root_run_id ?? run.id}`, 32);
}

/** 16 hex digits, unique within the trace for what `name` names. */
function spanId(traceId: string, name: string): string {
  return digest(`${traceId}/${name}`, 16);
}

export const spanIdOf = {
  /** The run's `invoke_agent` span. */
  run: (traceId: string, runId: string) => remembered(`${traceId}/run/${runId}`, 16),
  /**
   * A model call: one per execution of the step that made it (`started`: BullMQ's attemptsStarted), so a
   * call repeated after a takeover or a retry is a second span, never a duplicate of the first.
   */
  modelCall: (traceId: string, jobId: string, started: number, purpose: string) =>
    spanId(traceId, `chat/${jobId}/${started}/${purpose}`),
  /** A tool call's `execute_tool` span: one per call (its outcome is recorded once). */
  toolCall: (traceId: string, toolJobId: string) => spanId(traceId, `tool/${toolJobId}`),
};

/** Tool step job ids end in `-t<index>` (ids.ts stepJobId.tool). */
const toolJobIdPattern = /-i\d+-t\d+$/;

/**
 * The span a run's `invoke_agent` span hangs under: a child run's under the parent's `execute_tool` span of
 * the call that started it (or the parent's run span when a step other than a tool call started it); a root
 * run's under nothing.
 */
export function runParentSpanId(
  traceId: string,
  parent: { run_id: string; job_id: string } | null,
): string | undefined {
  if (!parent) return undefined;
  return toolJobIdPattern.test(parent.job_id)
    ? spanIdOf.toolCall(traceId, parent.job_id)
    : spanIdOf.run(traceId, parent.run_id);
}
