import { type Part, textOf } from '../../../chat/index.js';
import type { OutputGuardrailConfig } from '../../../config/index.js';
import { type ModelReply, rejectAnswer } from '../../../extensions/index.js';
import { createOutputCheck, type GuardrailResult } from '../guardrails.js';

/** Whether a reply is a final answer (no tool call): what the answer checks look at. */
function isFinalAnswer(parts: readonly Part[]): boolean {
  return !parts.some((part) => part.type === 'tool_call');
}

/** Compiled checks by their options object (one per agent): compiled at the first answer, then reused. */
const compiledChecks = new WeakMap<object, (answer: string) => GuardrailResult>();

function checkOf(config: OutputGuardrailConfig): (answer: string) => GuardrailResult {
  let check = compiledChecks.get(config);
  if (!check) {
    check = createOutputCheck(config);
    compiledChecks.set(config, check);
  }
  return check;
}

/** The answer checked by `config`: the reply, or its rejection (sent back `retries` times, then the failure). */
export function checkedAnswer(
  reply: ModelReply,
  config: OutputGuardrailConfig,
  check: string,
  retries: number,
): ModelReply | ReturnType<typeof rejectAnswer> {
  if (!isFinalAnswer(reply.parts)) return reply;
  let result: GuardrailResult;
  try {
    result = checkOf(config)(textOf(reply));
  } catch (error) {
    // A check that throws would throw again: the run fails with the reason, at once.
    const why = error instanceof Error ? error.message : String(error);
    return rejectAnswer(`the check could not run: ${why}`, { check });
  }
  if (result.ok) return reply;
  return rejectAnswer(result.reason, { maxRetries: retries, check });
}
