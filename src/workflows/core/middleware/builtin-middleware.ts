import type { AnyMiddleware } from '../../../extensions/index.js';
import { loggerMiddleware } from './logger-middleware.js';
import { outputGuardrailMiddleware } from './output-guardrail-middleware.js';
import { recoveryMiddleware } from './recovery-middleware.js';
import { timeoutMiddleware } from './timeout-middleware.js';

/**
 * The built-in middleware an agent may list by kind (config/builtin-middleware-options.ts has their options):
 * the output guardrail, a time limit per call, a log line per call and the recovery of tool calls that throw,
 * one file each. They are definitions on the same extension point as a user's (docs/extending.md);
 * `options.output_guardrail` and `options.output_schema` put the answer checks outermost on the agent's chain.
 */
export const builtinMiddleware: readonly AnyMiddleware[] = [
  outputGuardrailMiddleware,
  timeoutMiddleware,
  loggerMiddleware,
  recoveryMiddleware,
];
