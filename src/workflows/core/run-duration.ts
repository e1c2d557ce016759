import type { RunRecord } from '../run-record.js';

/**
 * How long a run took: from its creation (its wait in the queue included, as a person who started it waited)
 * to its end, or to `nowMs` while it is not finished. One computation for every place a run's duration is
 * shown (its view, the run list, its tree); null when a time does not parse.
 */
export function runDurationMs(
  run: Pick<RunRecord, 'created_at' | 'finished_at'>,
  nowMs: number,
): number | null {
  const from = Date.parse(run.created_at);
  const to = run.finished_at === null ? nowMs : Date.parse(run.finished_at);
  return Number.isNaN(from) || Number.isNaN(to) ? null : Math.max(0, to - from);
}
