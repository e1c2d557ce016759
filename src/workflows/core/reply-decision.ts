import { type Part, type ToolCallPart, textOf, toolCallsOf } from '../../chat/index.js';
import type { OutputGuardrailConfig } from '../../config/index.js';
import type { ContractResult } from '../run-record.js';
import { type GuardrailResult, guardrailVerdict } from './guardrails.js';

export type ReplyDecision =
  | {
      kind: 'final';
      result: string;
      /** The run ends with only part of its work done (a supervisor's limit, unfinished sub-goals). */
      partial?: { reason: string };
      /** The confidence the answer states (a structured answer's `confidence`). */
      confidence?: number | null;
      /** The answer checked against its handoff contract. */
      contract?: ContractResult;
    }
  | { kind: 'tools'; calls: ToolCallPart[] }
  /** The final answer failed the output guardrail: it is sent back with the reason, for another answer. */
  | { kind: 'retry'; feedback: string; rejection: AnswerRejection }
  /**
   * An answer after which an effect asked the person (decision 0049): not the run's end; the next iteration
   * waits for the answer and replies again.
   */
  | { kind: 'ask' }
  | {
      kind: 'failed';
      code: 'max_iterations' | 'guardrail_failed' | 'contract_violated';
      message: string;
      contract?: ContractResult;
    };

/** Why a final answer was sent back, as its answer_rejected event tells it. */
export interface AnswerRejection {
  /** `output_guardrail`, or the name of the check that failed (`options.output_schema`). */
  check: string;
  reason: string;
  /** Answers sent back so far, this one included. */
  retry: number;
  max_retries: number;
}

/**
 * A final answer a check rejected (the output guardrail, the output schema or a middleware of the user's,
 * through `rejectAnswer`), and what that means: sent back while retries are left, or the run's failure.
 */
export interface AnswerCheckFailure {
  /** What the answer_rejected event names as the check (`output_guardrail`, `options.output_schema`, …). */
  check: string;
  reason: string;
  on_fail: OutputGuardrailConfig['on_fail'];
  max_retries: number;
}

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
export function decideReply(
  parts: readonly Part[],
  iteration: number,
  maxIterations: number,
  rejected?: { failure: AnswerCheckFailure; retriesSoFar: number },
): ReplyDecision {
  const calls = toolCallsOf({ parts });
  if (calls.length === 0) return finalAnswer(textOf({ parts }), iteration, maxIterations, rejected);
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

/** A final answer, as the check that rejected it (when one did) decides: sent back, or the run's failure. */
function finalAnswer(
  result: string,
  iteration: number,
  maxIterations: number,
  rejected: { failure: AnswerCheckFailure; retriesSoFar: number } | undefined,
): ReplyDecision {
  if (!rejected) return { kind: 'final', result };
  const { failure, retriesSoFar } = rejected;
  const checked: GuardrailResult = {
    ok: false,
    reason: failure.reason,
    ...(failure.check === 'output_guardrail'
      ? {}
      : { by: { name: failure.check, on_fail: failure.on_fail, max_retries: failure.max_retries } }),
  };
  const verdict = guardrailVerdict(failure, checked, retriesSoFar);
  if (verdict.kind === 'accept') return { kind: 'final', result };
  if (verdict.kind === 'fail') return { kind: 'failed', code: verdict.code, message: verdict.message };
  if (iteration >= maxIterations) {
    return {
      kind: 'failed',
      code: 'guardrail_failed',
      message:
        `the final answer failed the output guardrail and max_iterations (${maxIterations}) leaves no ` +
        `iteration to answer again: ${verdict.feedback}`,
    };
  }
  return {
    kind: 'retry',
    feedback: verdict.feedback,
    rejection: {
      check: failure.check,
      reason: failure.reason,
      retry: verdict.retry,
      max_retries: failure.max_retries,
    },
  };
}
