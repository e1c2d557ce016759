import { spanIdOf, type TracedRun, traceIdOf } from './trace-ids.js';

/** The trace and span ids of a run's `invoke_agent` span (what a request that names the run links to). */
export function runSpanContext(run: TracedRun): { traceId: string; spanId: string } {
  const traceId = traceIdOf(run);
  return { traceId, spanId: spanIdOf.run(traceId, run.id) };
}
