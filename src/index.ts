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
  parseConfigText,
} from './config/index.js';
export {
  type AnswerRejection,
  type AnyMiddleware,
  type CoordinatorChoice,
  type CoordinatorContext,
  type CoordinatorDefinition,
  type CoordinatorView,
  defineCoordinator,
  defineEffect,
  defineMiddleware,
  defineStopCondition,
  type EffectContext,
  type EffectDefinition,
  type EffectEvent,
  type EffectPlan,
  type EffectView,
  type ExtensionContext,
  type Extensions,
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
  type StopConditionDefinition,
  type StopConditionView,
  type TeamView,
  type ToolCall,
  type ToolRequest,
  type ToolResult,
} from './extensions/index.js';
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
export { type Engine, engineFromConfig } from './workflows/index.js';
