import type { z } from 'zod';
import { type Part, textOf } from '../../chat/index.js';
import {
  type JsonSchemaSubset,
  loggerMiddlewareSchema,
  type OutputGuardrailConfig,
  outputGuardrailSchema,
  timeoutMiddlewareSchema,
} from '../../config/index.js';
import { RatchetError } from '../../errors/index.js';
import {
  type AnyMiddleware,
  defineMiddleware,
  type ModelReply,
  rejectAnswer,
  type ToolResult,
} from '../../extensions/middleware.js';
import { redactSecrets } from '../../secrets/index.js';
import { isStepControl } from '../../tools/index.js';
import { createOutputCheck, type GuardrailResult } from './guardrails.js';

/**
 * The built-in middleware: the output guardrail, a time limit per call, a log line per call and the recovery
 * of tool calls that throw. They are definitions on the same extension point as a user's (docs/extending.md),
 * listed by kind in an agent's `middleware`; `options.output_guardrail` and `options.output_schema` put the
 * answer checks outermost on the agent's chain.
 */

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
function checkedAnswer(
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

/** The options of the answer check `options.output_schema` makes (not listed in configs: the option is). */
export interface OutputSchemaCheck {
  json_schema: JsonSchemaSubset;
  max_retries: number;
}

/**
 * The check of `options.output_schema`: a final answer that is not one JSON object matching the schema goes
 * back with the errors, `max_retries` times a run (`options.output_schema_retries`). Not a kind the config
 * lists: the option also asks the provider for structured output and tells the model the schema.
 */
export const outputSchemaMiddleware = defineMiddleware<z.ZodType<OutputSchemaCheck>>({
  name: 'output_schema',
  async aroundModelCall(call, next) {
    const { json_schema, max_retries } = call.options;
    const reply = await next(call.request);
    const config = schemaChecks.get(call.options) ?? {
      deny: [],
      allow: [],
      json_schema,
      on_fail: 'retry' as const,
      max_retries,
    };
    schemaChecks.set(call.options, config);
    return checkedAnswer(reply, config, 'options.output_schema', max_retries);
  },
});
const schemaChecks = new WeakMap<object, OutputGuardrailConfig>();

/**
 * `timeout`: a time limit for each model call (`model_call_s`: aborted, then retried as `model_timeout`) and
 * each tool call (`tool_call_s`: aborted, and the model gets an error result saying so). The run's own
 * deadline (`options.timeout_s`) is the engine's: it also bounds steps that are not calls (waits for
 * children, for a person), which no middleware wraps.
 */
export const timeoutMiddleware = defineMiddleware({
  name: 'timeout',
  options: timeoutMiddlewareSchema,
  async aroundModelCall(call, next) {
    const seconds = call.options.model_call_s;
    if (seconds === undefined) return next(call.request);
    const limit = AbortSignal.timeout(seconds * 1_000);
    try {
      return await next(call.request, { signal: limit });
    } catch (error) {
      if (!limit.aborted || call.signal.aborted) throw error;
      throw new RatchetError(
        'model_timeout',
        `the model call took longer than ${seconds} s (middleware "timeout", model_call_s) and was aborted`,
      );
    }
  },
  async aroundToolCall(call, next) {
    const seconds = call.options.tool_call_s;
    if (seconds === undefined) return next(call.request);
    const limit = AbortSignal.timeout(seconds * 1_000);
    const timedOut: ToolResult = {
      content:
        `the call of tool "${call.request.name}" took longer than ${seconds} s (middleware "timeout", ` +
        'tool_call_s) and was stopped',
      isError: true,
    };
    // A handler that does not honour its signal is not waited for past the limit.
    let onExpiry = () => {};
    const expired = new Promise<ToolResult>((resolve) => {
      onExpiry = () => resolve(timedOut);
      limit.addEventListener('abort', onExpiry, { once: true });
    });
    try {
      return await Promise.race([next(call.request, { signal: limit }), expired]);
    } catch (error) {
      if (!limit.aborted || call.signal.aborted) throw error;
      return timedOut;
    } finally {
      limit.removeEventListener('abort', onExpiry);
    }
  },
});

/**
 * `logger`: a log line for each model call and each tool call (provider, model, tokens, duration; the tool,
 * whether its result is an error, its length), at `level`, and a warning for a call that fails. No content:
 * prompts, replies and arguments may hold what the logs must not.
 */
export const loggerMiddleware = defineMiddleware({
  name: 'logger',
  options: loggerMiddlewareSchema,
  async aroundModelCall(call, next) {
    const started = performance.now();
    try {
      const reply = await next(call.request);
      call.logger[call.options.level](
        {
          provider: reply.provider,
          model: reply.model,
          input_tokens: reply.usage.input_tokens,
          output_tokens: reply.usage.output_tokens,
          tool_calls: reply.parts.filter((part) => part.type === 'tool_call').length,
          duration_ms: Math.round(performance.now() - started),
        },
        'model call finished',
      );
      return reply;
    } catch (error) {
      call.logger.warn(
        { err: error, provider: call.request.provider, duration_ms: Math.round(performance.now() - started) },
        'model call failed',
      );
      throw error;
    }
  },
  async aroundToolCall(call, next) {
    const started = performance.now();
    try {
      const result = await next(call.request);
      call.logger[call.options.level](
        {
          tool: call.request.name,
          tool_call_id: call.request.toolCallId,
          is_error: result.isError,
          result_chars: result.content.length,
          duration_ms: Math.round(performance.now() - started),
        },
        'tool call finished',
      );
      return result;
    } catch (error) {
      call.logger.warn(
        { err: error, tool: call.request.name, duration_ms: Math.round(performance.now() - started) },
        'tool call failed',
      );
      throw error;
    }
  },
});

/**
 * `recovery`: a tool call that throws inside it (a middleware listed after it, or a framework error around
 * the handler) gives the model an error result with the message instead of failing the step. A cancelled
 * run, a lost lock, a shutdown and a handler waiting for an answer pass through. (A tool handler's own error
 * is already an error result; around a model call there is no result to recover to, so it wraps tool calls
 * only.)
 */
export const recoveryMiddleware = defineMiddleware({
  name: 'recovery',
  async aroundToolCall(call, next) {
    try {
      return await next(call.request);
    } catch (error) {
      if (call.signal.aborted || isStepControl(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      call.logger.warn(
        { err: error, tool: call.request.name },
        'tool call failed: recovered as an error result',
      );
      return {
        content: redactSecrets(`the call of tool "${call.request.name}" failed: ${message}`),
        isError: true,
      };
    }
  },
});

/** The built-in middleware an agent may list by kind (config/builtin-middleware-options.ts has their options). */
export const builtinMiddleware: readonly AnyMiddleware[] = [
  outputGuardrailMiddleware,
  timeoutMiddleware,
  loggerMiddleware,
  recoveryMiddleware,
];
