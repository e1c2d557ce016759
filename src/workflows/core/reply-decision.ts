import { type Part, type ToolCallPart, textOf, toolCallsOf } from '../../chat/index.js';

export type ReplyDecision =
  | { kind: 'final'; result: string }
  | { kind: 'tools'; calls: ToolCallPart[] }
  | { kind: 'failed'; code: 'max_iterations'; message: string };

/**
 * Gives every tool call an id that is unique within the reply. Providers normally send ids; a reply without
 * them (or with repeats) gets ids derived from the iteration, assigned once and recorded with the reply.
 */
export function assignToolCallIds(parts: readonly Part[], iteration: number): Part[] {
  const seen = new Set<string>();
  let callIndex = 0;
  return parts.map((part) => {
    if (part.type !== 'tool_call') return part;
    const index = callIndex;
    callIndex += 1;
    let id = part.id.trim();
    if (id === '' || seen.has(id)) {
      id = `call_${iteration}_${index}`;
      for (let suffix = 1; seen.has(id); suffix += 1) id = `call_${iteration}_${index}_${suffix}`;
    }
    seen.add(id);
    return id === part.id ? part : { ...part, id };
  });
}

/** What a model reply means for the run: a final answer, tool calls to run, or the end of the budget. */
export function decideReply(parts: readonly Part[], iteration: number, maxIterations: number): ReplyDecision {
  const calls = toolCallsOf({ parts });
  if (calls.length === 0) return { kind: 'final', result: textOf({ parts }) };
  if (iteration >= maxIterations) {
    return {
      kind: 'failed',
      code: 'max_iterations',
      message:
        `reached max_iterations (${maxIterations}) without a final answer: the model still asked for ` +
        `${calls.map((call) => call.name).join(', ')}. Raise agents[].options.max_iterations or simplify the task.`,
    };
  }
  return { kind: 'tools', calls };
}
