import { outputGuardrailSchema } from '../../../config/index.js';
import { defineMiddleware } from '../../../extensions/index.js';
import { checkedAnswer } from './answer-check.js';

/**
 * `output_guardrail`: checks each final answer (deny and allow patterns, a length, a JSON Schema) and rejects
 * one that fails: it goes back to the model with the reason (`on_fail: retry`, `max_retries` times a run), or
 * the run fails with `guardrail_failed`. Tool-call replies pass unchecked.
 */
export const outputGuardrailMiddleware = defineMiddleware({
  name: 'output_guardrail',
  options: outputGuardrailSchema,
  async aroundModelCall(call, next) {
    const { options } = call;
    const reply = await next(call.request);
    return checkedAnswer(
      reply,
      options,
      'output_guardrail',
      options.on_fail === 'retry' ? options.max_retries : 0,
    );
  },
});
