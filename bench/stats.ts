/** Latency statistics over samples in milliseconds. */
export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
}

/** Nearest-rank percentile of ascending samples; NaN when there are none. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
  };
}

/** Differences between consecutive timestamps: n marks give n - 1 gaps. */
export function gaps(marks: readonly number[]): number[] {
  const result: number[] = [];
  for (let index = 1; index < marks.length; index += 1) {
    result.push((marks[index] ?? 0) - (marks[index - 1] ?? 0));
  }
  return result;
}
