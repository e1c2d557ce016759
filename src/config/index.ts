export { type ApiToken, apiTokens, apiTokenValues } from './api-tokens.js';
export {
  builtinMiddlewareOptions,
  loggerMiddlewareSchema,
  timeoutMiddlewareSchema,
} from './builtin-middleware-options.js';
export { type KnownToolbox, sessionToolboxes } from './check-references.js';
export { ConfigError } from './config-error.js';
export type { ConfigExtensions } from './config-extensions.js';
export { configHash } from './config-hash.js';
export {
  type AgentConfig,
  type ApiConfig,
  type ApiTokenEntry,
  configSchema,
  DEFAULT_REDIS_URL,
  type EventsConfig,
  type HandoffConfig,
  type RatchetConfig,
  type RedisConfig,
  type RetentionConfig,
  type TeamConfig,
  type TelemetryConfig,
  type TenantSettings,
  type ToolboxReference,
  type TriggerConfig,
  type WorkerConfig,
} from './config-schema.js';
export { configSecrets, registerConfigSecrets } from './config-secrets.js';
export { formatConfigSummary, redactUrl } from './config-summary.js';
export type { ContractConfig } from './contract-config-schema.js';
export {
  type BuiltinCoordinatorConfig,
  type CoordinatorConfig,
  coordinatorKinds,
  coordinatorOptionSchemas,
  isLlmCoordinator,
  type LlmCoordinatorConfig,
  stopConditionOptionSchemas,
  type UntilConfig,
} from './coordinator-config-schema.js';
export {
  type EffectConfig,
  type EffectKind,
  type EffectParams,
  effectKinds,
  effectParamSchemas,
} from './effect-config-schema.js';
export { envReferencesOf } from './env-references.js';
export {
  type JsonSchemaSubset,
  type JsonSchemaType,
  type OutputGuardrailConfig,
  outputGuardrailSchema,
} from './guardrail-config-schema.js';
export {
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  type ParseConfigOptions,
  parseConfigText,
} from './load-config.js';
export {
  loadConfigRaw,
  maxRawConfigBytes,
  parseConfigRaw,
  type RawConfig,
  type RawEnvReference,
  type TextPosition,
} from './load-config-raw.js';
export type {
  HttpMcpServerConfig,
  McpServerConfig,
  StdioMcpServerConfig,
} from './mcp-config-schema.js';
export type { ProviderConfig } from './provider-config-schema.js';
export {
  compileSafePattern,
  hasLinearRegExpEngine,
  patternProblem,
  unsafePatternReason,
} from './regex-safety.js';
export { resolveEntryAgent } from './resolve-entry-agent.js';
export { type ScheduleConfig, scheduleTimingProblem } from './schedule-config-schema.js';
export { didYouMean, suggest } from './suggest.js';
export { harmlessRequestHeaders, type ToolsConfig } from './tools-config-schema.js';
export {
  type WebhookConfig,
  type WebhookEventType,
  webhookEventTypes,
  webhookIdOf,
} from './webhook-config-schema.js';
