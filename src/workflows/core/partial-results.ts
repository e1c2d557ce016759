import type { ToolCallPart } from '../../chat/index.js';
import { type PartialResults, partialResultLimits, reportProgressInputSchema } from '../../tools/index.js';

/**
 * A run's partial results after a reply that asks for tool calls: the `data` of each `report_progress` call
 * whose arguments the tool accepts, merged in call order (a name reported again replaces its value and keeps
 * its place). Decided from the recorded reply alone, with its commit. A run keeps at most
 * `partialResultLimits.names` names: a new name past them is not kept (docs/api.md, `partial_results`).
 */
export function mergePartialResults(current: PartialResults, calls: readonly ToolCallPart[]): PartialResults {
  let merged = current;
  for (const call of calls) {
    const data = reportedData(call);
    if (data !== undefined) merged = mergeReport(merged, data);
  }
  return merged;
}

/**
 * A run's partial results with one report's `data` merged in (a `report_progress` call's, or a tool's
 * `reportProgress({data})`, decision 0049): a name reported again replaces its value and keeps its place; a
 * new name past the run's `partialResultLimits.names` is not kept.
 */
export function mergeReport(current: PartialResults, data: PartialResults): PartialResults {
  let merged = current;
  for (const [name, value] of Object.entries(data)) {
    if (!Object.hasOwn(merged, name) && Object.keys(merged).length >= partialResultLimits.names) continue;
    merged = { ...merged, [name]: value };
  }
  return merged;
}

/** The `data` of a `report_progress` call, or undefined when it has none or its arguments are refused. */
export function reportedData(call: ToolCallPart): PartialResults | undefined {
  if (call.name !== 'report_progress') return undefined;
  let input: unknown;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  const parsed = reportProgressInputSchema.safeParse(input);
  return parsed.success ? parsed.data.data : undefined;
}
