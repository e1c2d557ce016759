import type { ResultMetadata } from '../../events/result-metadata.js';
import type { RunRecord } from '../run-record.js';

export type { ResultMetadata };

/**
 * What a run's result says about itself: how long it took, how many iterations and tool calls, tokens and
 * cost. It is in the run's `agent_end` event, in the run as the API shows it, and in the result a parent
 * receives from a delegation. `confidence` is what a structured answer states, `partial` why a run ended with
 * part of its work (a supervisor's limit or unfinished sub-goals), `contract` its handoff contract's verdict,
 * `partial_results` the named intermediate results it reported.
 */

/** A run's result metadata: finished, from its finish; not finished yet, up to `now`. */
export function resultMetadataOf(
  run: Pick<
    RunRecord,
    | 'finished_at'
    | 'started_at'
    | 'created_at'
    | 'usage'
    | 'iteration'
    | 'tool_calls'
    | 'cost_usd'
    | 'confidence'
    | 'partial'
    | 'contract'
    | 'partial_results'
    | 'schema_version'
  >,
  now: string,
): ResultMetadata {
  const end = run.finished_at ?? now;
  const input = run.usage.input_tokens;
  const output = run.usage.output_tokens;
  return {
    execution_time_ms: Math.max(0, Date.parse(end) - Date.parse(run.started_at ?? run.created_at)),
    iterations: run.iteration,
    tool_calls: { count: run.tool_calls.count, names: [...run.tool_calls.names] },
    tokens: { input, output, total: input + output },
    cost_usd: run.cost_usd,
    confidence: run.confidence,
    partial: run.partial,
    contract: run.contract,
    partial_results: run.partial_results,
    schema_version: run.schema_version,
  };
}
