import type { Target } from './report.js';
import type { TakeoverResult } from './takeover.js';

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}

function milliseconds(value: number): string {
  return Number.isNaN(value) ? 'not seen' : `${value.toFixed(0)} ms`;
}

/** The parts of a takeover, in the order they happen (bench/takeover.ts, `TakeoverParts`). */
const partLabels: readonly [keyof TakeoverResult['parts'], string][] = [
  ['lastListedMs', 'last listed'],
  ['connectionGoneMs', 'connection unlisted'],
  ['noticedMs', 'judged dead'],
  ['releasedMs', 'released + stalled check'],
  ['activeMs', 'active on the survivor'],
  ['completedMs', 'completed'],
];

function formatParts(result: TakeoverResult): string {
  return partLabels.map(([key, label]) => `${label} ${milliseconds(result.parts[key])}`).join(' → ');
}

export function formatTakeovers(results: readonly TakeoverResult[]): string {
  const first = results[0];
  if (!first) return 'C. takeover: not measured';
  const lines = results.map(
    (result, index) =>
      `  #${index + 1}: killed ${result.activeToKillMs.toFixed(0)} ms after the job was seen active; stalled ` +
      `${seconds(result.stalledMs)} after the kill, run ${result.status} ${seconds(result.takeoverMs)} after the kill` +
      `\n      ${formatParts(result)}`,
  );
  const medians = partLabels.map(
    ([key, label]) =>
      `${label} ${milliseconds(
        percentileOf(
          results.map((result) => result.parts[key]),
          0.5,
        ),
      )}`,
  );
  return [
    `C. takeover after SIGKILL, ${results.length} one after another (lock_duration_ms ${first.lockDurationMs}, ` +
      `stalled_interval_ms ${first.stalledIntervalMs}, dead_worker_ms ${first.deadWorkerMs})`,
    ...lines,
    `  medians after the kill: ${medians.join(', ')}`,
  ].join('\n');
}

function percentileOf(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN
  );
}

/** Issue 37's target for the p95 of takeovers after SIGKILL (decision 0045). */
export const takeoverLimitMs = 500;

/** p95 of the takeovers (SIGKILL → the run completed on the survivor) must be within `limitMs`. */
export function takeoverTarget(results: readonly TakeoverResult[], limitMs: number): Target {
  const times = results.map((result) => result.takeoverMs);
  const p50 = percentileOf(times, 0.5);
  const p95 = percentileOf(times, 0.95);
  const allCompleted = results.every((result) => result.status === 'completed');
  return {
    label: `takeover after SIGKILL, p95 of ${results.length} (default worker settings)`,
    measured: `p50 ${seconds(p50)}, p95 ${seconds(p95)}${allCompleted ? '' : ' (a run did not complete)'}`,
    limit: `p95 ≤ ${limitMs / 1000} s`,
    pass: allCompleted && p95 <= limitMs,
  };
}
