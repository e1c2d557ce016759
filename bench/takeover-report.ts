import type { Target } from './report.js';
import type { TakeoverResult } from './takeover.js';

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}

export function formatTakeovers(results: readonly TakeoverResult[]): string {
  const first = results[0];
  if (!first) return 'C. takeover: not measured';
  const lines = results.map(
    (result, index) =>
      `  #${index + 1}: killed ${result.activeToKillMs.toFixed(0)} ms after the job was seen active; stalled ` +
      `${seconds(result.stalledMs)} after the kill, run ${result.status} ${seconds(result.takeoverMs)} after the kill`,
  );
  return [
    `C. takeover after SIGKILL, ${results.length} at once (lock_duration_ms ${first.lockDurationMs}, ` +
      `stalled_interval_ms ${first.stalledIntervalMs})`,
    ...lines,
  ].join('\n');
}

/** The worst takeover observed must complete the run within `limitMs`. */
export function takeoverTarget(results: readonly TakeoverResult[], limitMs: number): Target {
  const worst = Math.max(...results.map((result) => result.takeoverMs));
  const allCompleted = results.every((result) => result.status === 'completed');
  return {
    label: `takeover after SIGKILL, worst of ${results.length}`,
    measured: `${seconds(worst)}${allCompleted ? '' : ' (a run did not complete)'}`,
    limit: `≤ ${limitMs / 1000} s`,
    pass: allCompleted && worst <= limitMs,
  };
}
