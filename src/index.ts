// Ratchet as a library (`import … from 'ratchet'`): load a config, run workers and engines from code, and
// extend Ratchet with effects, coordinators and stop conditions of your own (docs/extending.md).

export {
  type Message,
  type Part,
  type ToolCallPart,
  type ToolResultPart,
  textOf,
  toolCallsOf,
  toolResultsOf,
} from './chat/index.js';
export {
  ConfigError,
  DEFAULT_REDIS_URL,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  loadConfigRaw,
  maxRawConfigBytes,
  parseConfigRaw,
  parseConfigText,
  type RawConfig,
  type RawEnvReference,
  type TextPosition,
} from './config/index.js';
export { type Engine, engineFromConfig } from './engine/index.js';
export type { ExtensionContext } from './extensions/context.js';
export {
  type AnyContractRule,
  type ContractRuleCall,
  type ContractRuleDefinition,
  type ContractRuleVerdict,
  defineContractRule,
} from './extensions/contract-rule.js';
export type {
  CoordinatorChoice,
  CoordinatorContext,
  CoordinatorDefinition,
  CoordinatorView,
  StopConditionDefinition,
  StopConditionView,
  TeamView,
} from './extensions/coordinator-definition.js';
export { defineCoordinator, defineStopCondition } from './extensions/coordinators.js';
export type {
  AfterReplyContext,
  AfterReplyDecision,
  AfterReplyMessage,
  AfterReplyQuestion,
  AfterReplyView,
  EffectContext,
  EffectDefinition,
  EffectEvent,
  EffectPlan,
  EffectView,
} from './extensions/effect-definition.js';
export { defineEffect } from './extensions/effects.js';
export type { Extensions } from './extensions/extensions.js';
export {
  type AnswerRejection,
  type AnyMiddleware,
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
} from './extensions/middleware.js';
export {
  builtinToolboxNames,
  coordinatorKinds,
  effectKinds,
  middlewareKinds,
  providerKinds,
} from './known-kinds.js';
export { createLogger, type Logger } from './log/index.js';
export { type ProviderKind, registerProvider } from './models/index.js';
export { closeRedis, createRedis } from './redis/connection.js';
export { type EnsureRedisOptions, ensureRedis, type LocalRedis } from './redis/local-redis.js';
export {
  createToolBox,
  defineTool,
  type Tool,
  type ToolBox,
  type ToolImage,
  withImages,
} from './tools/index.js';
export { RatchetWorker, type RatchetWorkerOptions } from './worker/ratchet-worker.js';
export {
  type ContractValidation,
  type ContractViolation,
  type ValidateAgainstContractOptions,
  validateAgainstContract,
} from './workflows/index.js';
