import type { CpuUse } from './cpu-meter.js';

/** What one measured scenario produced; every time is in milliseconds of `performance.now()`. */
export interface ScenarioResult {
  /** Units measured: raw chains or Ratchet runs (warm-up units excluded). */
  units: number;
  /** BullMQ jobs the measured units executed. */
  jobs: number;
  /** From the first measured unit's start to the last one's completion. */
  wallMs: number;
  /** CPU time over the same span. */
  cpu: CpuUse;
  /** Per unit: its start (add or startRun) → its last job's completion as a client sees it (QueueEvents). */
  unitLatencies: number[];
  /**
   * Per job: the gap between the same point in consecutive jobs of a unit (the first gap starts at the
   * unit's start). It spans one queue hop plus one job's processing.
   */
  stepGaps: number[];
  /** Ratchet only: gaps between consecutive model calls of a run (one iteration = an iteration job and a tool job). */
  iterationGaps: number[];
}

export interface ScenarioSize {
  /** Units in flight at a time. */
  parallel: number;
  units: number;
  /** Units run first, on the same worker, and not measured. */
  warmup: number;
  /** BullMQ worker concurrency. */
  concurrency: number;
}
