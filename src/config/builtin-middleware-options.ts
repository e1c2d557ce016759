import { z } from 'zod';
import { outputGuardrailSchema } from './guardrail-config-schema.js';

/** The longest time limit the `timeout` middleware takes: a day. */
const maxCallSeconds = 86_400;

/** Options of the built-in `timeout` middleware: a time limit for each model call and/or each tool call. */
export const timeoutMiddlewareSchema = z
  .strictObject({
    /** Seconds a model call may take; past them it is aborted and retried (`model_timeout`). */
    model_call_s: z.number().positive().max(maxCallSeconds).optional(),
    /** Seconds a tool call may take; past them it is aborted and the model gets an error result. */
    tool_call_s: z.number().positive().max(maxCallSeconds).optional(),
  })
  .refine((options) => options.model_call_s !== undefined || options.tool_call_s !== undefined, {
    error: 'give model_call_s, tool_call_s or both (seconds)',
  });

/** Options of the built-in `logger` middleware. */
export const loggerMiddlewareSchema = z.strictObject({
  /** The level of the line logged when a call finishes (a failure is logged at warn). */
  level: z.enum(['debug', 'info']).default('info'),
});

/**
 * The built-in middleware kinds an agent may list (`middleware: [{kind, ...options}]`) and the schemas of
 * their options. Their definitions are in src/workflows/core/middleware/; a middleware registered
 * in code may not take one of these names.
 */
export const builtinMiddlewareOptions: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['output_guardrail', outputGuardrailSchema],
  ['timeout', timeoutMiddlewareSchema],
  ['logger', loggerMiddlewareSchema],
  ['recovery', z.strictObject({})],
]);
