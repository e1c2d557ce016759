import { z } from 'zod';
import { mcpServerConfigSchema } from './mcp-config-schema.js';
import { providerConfigSchema } from './provider-config-schema.js';

/**
 * A section or field that may be left out, or left empty in YAML (`worker:` with every line below it
 * commented out parses as null): both mean "use the defaults".
 */
function withDefault<T extends z.ZodType>(schema: T, defaultValue: z.input<T>) {
  return z.preprocess(nullAsMissing, schema.prefault(defaultValue));
}

function nullAsMissing(value: unknown): unknown {
  return value === null ? undefined : value;
}

function integer(minimum: number, maximum?: number) {
  const atLeast = z.int().min(minimum);
  return maximum === undefined ? atLeast : atLeast.max(maximum);
}

const agentNamePattern = /^[a-zA-Z][\w-]*$/;
const prefixPattern = /^[\w.-]+$/;
const redisUrlPattern = /^rediss?:\/\/\S*$/;

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const agentOptionsSchema = z.strictObject({
  max_iterations: withDefault(integer(1), 10),
  /** Stream the model's text to the session's events (text_delta) as it is produced. */
  stream: withDefault(z.boolean(), false),
});

const toolSettingsSchema = z.strictObject({
  /** The call waits until a person approves, rejects or edits it. */
  requires_approval: withDefault(z.boolean(), false),
});

const agentSchema = z.strictObject({
  name: z.string().regex(agentNamePattern, {
    error: 'must start with a letter and contain only letters, digits, "_" and "-"',
  }),
  description: withDefault(z.string(), ''),
  /** The system prompt. */
  instructions: withDefault(z.string(), ''),
  provider: z.string().min(1),
  toolboxes: withDefault(z.array(z.string().min(1)), []),
  /** Limits of each run of this agent (input + output tokens, USD); a run's own budget applies too. */
  budget: z.preprocess(
    nullAsMissing,
    z
      .strictObject({
        tokens: z.int().positive().optional(),
        cost_usd: z.number().positive().optional(),
        on_exceeded: z.enum(['fail', 'ask']).optional(),
      })
      .optional(),
  ),
  /** Settings of single tools, by tool name. */
  tools: withDefault(z.record(z.string().min(1), toolSettingsSchema), {}),
  options: withDefault(agentOptionsSchema, {}),
});

const redisSchema = z.strictObject({
  /** The loader fills a missing url from REDIS_URL (environment, then .env files) before parsing. */
  url: withDefault(
    z.string().regex(redisUrlPattern, { error: 'must be a redis:// or rediss:// URL' }),
    DEFAULT_REDIS_URL,
  ),
  /** Key prefix; Redis keys add their own hash tags and separators, so braces and colons are not allowed. */
  prefix: withDefault(
    z.string().regex(prefixPattern, { error: 'must contain only letters, digits, "_", "." and "-"' }),
    'ratchet',
  ),
  shards: withDefault(integer(1, 1024), 1),
});

const workerSchema = z.strictObject({
  concurrency: withDefault(integer(1), 10),
  lock_duration_ms: withDefault(integer(1000), 10_000),
  // BullMQ may skip one stalled check (its guard key lives exactly one interval), so a dead worker's step
  // is taken over within lock + 2 x interval: 14 s with these defaults.
  stalled_interval_ms: withDefault(integer(500), 2_000),
  max_stalled_count: withDefault(integer(1), 100),
  /** Attempts of a step that fails with a retryable error. */
  step_attempts: withDefault(integer(1), 5),
  /** Base of the exponential backoff between attempts. */
  backoff_base_ms: withDefault(integer(0), 1_000),
  backoff_max_ms: withDefault(integer(0), 60_000),
  /** Grace period after SIGTERM before in-flight steps are abandoned. */
  shutdown_timeout_ms: withDefault(integer(0), 30_000),
  /** A step waiting for an answer wakes this often to check (answers normally wake it at once). */
  question_recheck_ms: withDefault(integer(100), 60_000),
  /** How long finished step jobs are kept. */
  keep_completed_jobs_s: withDefault(integer(0), 86_400),
});

const apiSchema = z.strictObject({
  host: withDefault(z.string().min(1), '127.0.0.1'),
  port: withDefault(integer(0, 65_535), 8080),
  /** Bearer tokens accepted by the API; none configured = no authentication (local use only). */
  tokens: withDefault(z.array(z.string().min(16, { error: 'must be at least 16 characters' })), []),
  /** Largest request body accepted; larger ones get 413. */
  body_limit_bytes: withDefault(integer(1024), 1_048_576),
  /** Interval of SSE keep-alive comments. */
  keepalive_ms: withDefault(integer(100), 15_000),
});

const eventsSchema = z.strictObject({
  /** Cap of each session's event stream (trimmed approximately). */
  max_len: withDefault(integer(100), 10_000),
});

/**
 * The shape of a config file. References between entries (agent → provider, toolboxes, entry_agent) and
 * unique names are checked by the loader, which sees the whole file even when parts of it fail this schema.
 */
export const configSchema = z.strictObject({
  providers: z.array(providerConfigSchema).min(1, { error: 'define at least one provider' }),
  agents: z.array(agentSchema).min(1, { error: 'define at least one agent' }),
  entry_agent: z.preprocess(nullAsMissing, z.string().min(1).optional()),
  /** Prices per model name, in USD per million tokens: the cost of each request, summed like usage. */
  pricing: withDefault(
    z.record(
      z.string().min(1),
      z.strictObject({
        input: z.number().nonnegative(),
        output: z.number().nonnegative(),
        cached_input: z.number().nonnegative().optional(),
      }),
    ),
    {},
  ),
  /** Context window per provider kind, for providers without their own `context_window`. */
  default_context_windows: withDefault(z.record(z.string().min(1), integer(0)), {}),
  redis: withDefault(redisSchema, {}),
  worker: withDefault(workerSchema, {}),
  api: withDefault(apiSchema, {}),
  events: withDefault(eventsSchema, {}),
  /** MCP servers whose tools become toolboxes named after them; each worker connects to every one. */
  mcp_servers: withDefault(z.array(mcpServerConfigSchema), []),
});

export type RatchetConfig = z.output<typeof configSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
export type RedisConfig = z.output<typeof redisSchema>;
export type WorkerConfig = z.output<typeof workerSchema>;
export type EventsConfig = z.output<typeof eventsSchema>;
export type ApiConfig = z.output<typeof apiSchema>;
