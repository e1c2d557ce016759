export { builtinMiddleware } from './builtin-middleware.js';
export { loggerMiddleware } from './logger-middleware.js';
export { outputGuardrailMiddleware } from './output-guardrail-middleware.js';
export { type OutputSchemaCheck, outputSchemaMiddleware } from './output-schema-middleware.js';
export { recoveryMiddleware } from './recovery-middleware.js';
export { timeoutMiddleware } from './timeout-middleware.js';
