// The extension points (docs/extending.md): what a program adds to Ratchet in code (effects, coordinators,
// stop conditions, middleware), the views each is given, and the deterministic context every extension
// decides from. The built-ins are registrations on the same points (src/workflows/core).

export { type ExtensionContext, type ExtensionStep, extensionContext } from './context.js';
export type {
  CoordinatorChoice,
  CoordinatorContext,
  CoordinatorDefinition,
  CoordinatorView,
  StopConditionDefinition,
  StopConditionView,
  TeamView,
} from './coordinator-definition.js';
export { defineCoordinator, defineStopCondition } from './coordinators.js';
export type {
  EffectContext,
  EffectDefinition,
  EffectEvent,
  EffectPlan,
  EffectView,
} from './effect-definition.js';
export { defineEffect } from './effects.js';
export type { Extensions } from './extensions.js';
export {
  type AnswerRejection,
  type AnyMiddleware,
  type ConfiguredMiddleware,
  defineMiddleware,
  isAnswerRejection,
  isRefusal,
  type JsonValue,
  type MiddlewareCall,
  type MiddlewareDefinition,
  type ModelCall,
  type ModelReply,
  type ModelRequest,
  type NextModelCall,
  type NextOptions,
  type NextToolCall,
  type Refusal,
  refuse,
  rejectAnswer,
  type ToolCall,
  type ToolRequest,
  type ToolResult,
} from './middleware.js';
export { type MiddlewareDecision, runModelChain, runToolChain } from './middleware-chain.js';
