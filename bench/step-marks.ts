import { performance } from 'node:perf_hooks';

/** Per run id, the `performance.now()` of each marked point of its steps, in the order they were reached. */
export type StepMarks = Map<string, number[]>;

export function markStep(marks: StepMarks, runId: string): void {
  const list = marks.get(runId);
  if (list) list.push(performance.now());
  else marks.set(runId, [performance.now()]);
}
