import { isIP } from 'node:net';
import { z } from 'zod';
import { originOf } from '../http/index.js';
import { logFormatSettings } from '../log/index.js';
import {
  duration,
  eventNameSchema,
  externalEventLimits,
  integer,
  maxDayMs,
  maxHourMs,
  maxQueuedMessagesLimit,
  maxRetentionS,
  maxRunTimeoutS,
  nullAsMissing,
  onBusyPolicies,
  tenantNameSchema,
  withDefault,
} from '../schemas/index.js';
import { contractConfigSchema, schemaVersionSchema } from './contract-config-schema.js';
import {
  type BuiltinCoordinatorKind,
  coordinatorConfigSchema,
  coordinatorKinds,
} from './coordinator-config-schema.js';
import { effectConfigSchema } from './effect-config-schema.js';
import { jsonSchemaSubsetSchema, outputGuardrailSchema } from './guardrail-config-schema.js';
import { mcpServerConfigSchema } from './mcp-config-schema.js';
import { middlewareConfigSchema } from './middleware-config-schema.js';
import { providerConfigSchema } from './provider-config-schema.js';
import { scheduleConfigSchema } from './schedule-config-schema.js';
import { telemetryConfigSchema } from './telemetry-config-schema.js';
import { toolsConfigSchema } from './tools-config-schema.js';
import { webhooksSchema } from './webhook-config-schema.js';

const agentNamePattern = /^[a-zA-Z][\w-]*$/;
const prefixPattern = /^[\w.-]+$/;
const redisUrlPattern = /^rediss?:\/\/\S*$/;

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const agentOptionsSchema = z.strictObject({
  /**
   * Model calls per run. 0: no limit, allowed only with a deadline (`timeout_s`) or a budget (`budget`), which
   * then ends the run (boundedRuns).
   */
  max_iterations: withDefault(integer(0), 10),
  /** Stream the model's text to the session's events (text_delta) as it is produced. */
  stream: withDefault(z.boolean(), false),
  /**
   * When the agent's definition changes in the workers' config while a run of it is unfinished
   * (decision 0030): `pin` keeps the definition the run started with; `upgrade` moves the run to the current
   * one at its next iteration, with an `agent_upgraded` event.
   */
  on_change: withDefault(z.enum(['pin', 'upgrade']), 'pin'),
  /**
   * Offer list_agents, delegate_to_agent and spawn_agents. Default: on when the config has more than one
   * agent.
   */
  delegate: z.preprocess(nullAsMissing, z.boolean().optional()),
  /** Fraction of the context window at which `compact` summarises (its default threshold). */
  context_threshold: withDefault(z.number().gt(0).lte(1), 0.8),
  /** A deadline for a whole run of this agent, its child runs included: 1 s to 365 days. */
  timeout_s: z.preprocess(nullAsMissing, duration(1, maxRunTimeoutS, '365 days').optional()),
  /**
   * What a message sent to a session of this agent whose run is active does when the request does not say
   * (`on_busy`, decision 0032): reject (409 session_busy), queue, steer or interrupt.
   */
  on_busy: withDefault(z.enum(onBusyPolicies), 'reject'),
  /** The most messages a session may hold waiting, queued and steered together: 1 to 100. */
  max_queued_messages: withDefault(integer(1, maxQueuedMessagesLimit), 10),
  /** A check of the run's final answer. */
  output_guardrail: z.preprocess(nullAsMissing, outputGuardrailSchema.optional()),
  /**
   * The final answer is a JSON object matching this JSON Schema: asked of the provider as structured output
   * where it supports it, said in the instructions, and checked; an answer that does not match goes back
   * with the errors, at most `output_schema_retries` times (default 2), then the run fails.
   */
  output_schema: z.preprocess(nullAsMissing, jsonSchemaSubsetSchema.optional()),
  output_schema_retries: z.preprocess(nullAsMissing, integer(0, 10).optional()),
  /** The version of `output_schema`: named in the result's metadata (`schema_version`) unless a contract names one. */
  output_schema_version: z.preprocess(nullAsMissing, schemaVersionSchema.optional()),
  /**
   * How deep this agent's delegations may go (a child of a root run is depth 1), below the global
   * `max_delegation_depth`: the smaller of the two applies.
   */
  max_delegation_depth: z.preprocess(nullAsMissing, integer(0, 100).optional()),
  /**
   * The agent supervises: it declares sub-goals (declare_sub_goals), delegates them and tracks them to
   * completion; the run finishes on its own when all are completed.
   */
  supervisor: z.preprocess(
    nullAsMissing,
    z
      .strictObject({
        /** Sub-goals one declaration keeps; more are cut, with a warning. */
        max_sub_goals: withDefault(integer(1, 50), 5),
        /** Delegations the run may ask for in all; past it the run ends with what it has, marked partial. */
        max_orchestration_steps: withDefault(integer(1, 1000), 20),
      })
      .optional(),
  ),
});

/** Input + output tokens and USD a run may use; past them it fails, or asks a person to raise them. */
const budgetConfigSchema = z.preprocess(
  nullAsMissing,
  z
    .strictObject({
      tokens: z.int().positive().optional(),
      cost_usd: z.number().positive().optional(),
      on_exceeded: z.enum(['fail', 'ask']).optional(),
    })
    .optional(),
);

const toolSettingsSchema = z.strictObject({
  /** The call waits until a person approves, rejects or edits it. */
  requires_approval: withDefault(z.boolean(), false),
});

/** A toolbox an agent uses: its name, or its name with the only tools of it the agent gets. */
const toolboxReferenceSchema = z.union(
  [
    z.string().min(1),
    z.strictObject({
      name: z.string().min(1),
      /** Only these tools of the toolbox; absent = all of them. */
      tools: z.array(z.string().min(1)).min(1).optional(),
    }),
  ],
  { error: 'expected a toolbox name, or {name, tools: [tool names]} for some of its tools' },
);

const skillsSchema = z.strictObject({
  /** Folder of skills (`<dir>/<name>/SKILL.md`), relative to the config file's directory. */
  dir: withDefault(z.string().min(1), '.ratchet/skills'),
});

const agentSchema = z.strictObject({
  name: z.string().regex(agentNamePattern, {
    error: 'must start with a letter and contain only letters, digits, "_" and "-"',
  }),
  description: withDefault(z.string(), ''),
  /** Shown before the agent's name in clients (agent_start events). */
  prefix: withDefault(z.string().min(1).max(16), '🤖'),
  /** The system prompt. */
  instructions: withDefault(z.string(), ''),
  provider: z.string().min(1),
  /** Toolbox names, or `{name, tools}` to offer only some tools of a toolbox; searched in order. */
  toolboxes: withDefault(z.array(toolboxReferenceSchema), []),
  /** Skills this agent gets (names of folders under `skills.dir`); empty = every skill. */
  skills: withDefault(z.array(z.string().min(1)), []),
  /** Limits of each run of this agent (input + output tokens, USD); a run's own budget applies too. */
  budget: budgetConfigSchema,
  /** Settings of single tools, by tool name. */
  tools: withDefault(z.record(z.string().min(1), toolSettingsSchema), {}),
  options: withDefault(agentOptionsSchema, {}),
  /**
   * Hooks around each model call (docs/effects.md). Absent: the defaults (trim_tool_results and compact when
   * the provider has a context window); `[]`: none.
   */
  effects: z.preprocess(nullAsMissing, z.array(effectConfigSchema).optional()),
  /**
   * Code around each model call and tool call, registered in code (`extensions.middleware`) and listed here
   * by name with its options, the first outermost (docs/extending.md).
   */
  middleware: withDefault(z.array(middlewareConfigSchema), []),
});

/** `options.max_iterations: 0` (no limit) needs something else that ends a run: a deadline or a budget. */
function boundedRuns(agent: z.output<typeof agentSchema>, context: z.RefinementCtx): void {
  const { options, budget } = agent;
  if (options.max_iterations !== 0 || options.timeout_s !== undefined) return;
  if (budget?.tokens !== undefined || budget?.cost_usd !== undefined) return;
  context.addIssue({
    code: 'custom',
    path: ['options', 'max_iterations'],
    message:
      '0 means no iteration limit, which needs something else to end a run: set options.timeout_s (a ' +
      'deadline) or budget.tokens / budget.cost_usd, or give max_iterations of 1 or more',
  });
}

const memberName = z.string().regex(agentNamePattern, {
  error: 'must start with a letter and contain only letters, digits, "_" and "-"',
});

/** Agents sharing one chat and passing control with transfer_to_<name> tools; the first member starts. */
const handoffSchema = z.strictObject({
  name: memberName,
  description: withDefault(z.string(), ''),
  prefix: withDefault(z.string().min(1).max(16), '🤝'),
  members: z.array(memberName).min(2, { error: 'a handoff group needs at least two members' }),
  /** Transfers allowed in one run; a transfer past it is refused (the member must answer itself). */
  max_handoffs: withDefault(integer(0), 10),
});

const teamOptionsSchema = z.strictObject({
  /** A deadline for a whole run of this team, its members' runs included: 1 s to 365 days. */
  timeout_s: z.preprocess(nullAsMissing, duration(1, maxRunTimeoutS, '365 days').optional()),
});

/** Members with roles, a shared chat, a private chat per member, and a coordinator choosing who acts. */
const teamSchema = z.strictObject({
  name: memberName,
  description: withDefault(z.string(), ''),
  prefix: withDefault(z.string().min(1).max(16), '👥'),
  members: z
    .array(z.strictObject({ agent: memberName, role: withDefault(z.string().min(1), 'member') }))
    .min(1, { error: 'a team needs at least one member' }),
  coordinator: coordinatorConfigSchema,
  options: withDefault(teamOptionsSchema, {}),
  /**
   * The budget of a run of this team, shared by its members' runs (their usage is summed on the team's run,
   * the root of their tree): the run's own budget when it asks none, the most it may ask otherwise.
   */
  budget: budgetConfigSchema,
});

/**
 * A built-in coordinator's `max_rounds: 0` (no limit) needs something else that ends a team's run: a
 * deadline or a budget (the team's run's, which its members share). A coordinator registered in code says
 * itself what its options mean.
 */
function boundedRounds(team: z.output<typeof teamSchema>, context: z.RefinementCtx): void {
  const { coordinator } = team;
  if (!coordinatorKinds.includes(coordinator.kind as BuiltinCoordinatorKind)) return;
  if ((coordinator as { max_rounds?: unknown }).max_rounds !== 0) return;
  if (team.options.timeout_s !== undefined) return;
  if (team.budget?.tokens !== undefined || team.budget?.cost_usd !== undefined) return;
  context.addIssue({
    code: 'custom',
    path: ['coordinator', 'max_rounds'],
    message:
      '0 means no round limit, which needs something else to end a run: set options.timeout_s (a ' +
      'deadline) or budget.tokens / budget.cost_usd on the team, or give max_rounds of 1 or more',
  });
}

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
  /**
   * Seed nodes of a Redis Cluster (redis:// URLs); when given, every connection is a cluster client and `url`
   * is not used. The loader fills it from REDIS_CLUSTER_NODES (comma-separated) when the file has none.
   */
  cluster_nodes: z.preprocess(
    nullAsMissing,
    z
      .array(z.string().regex(redisUrlPattern, { error: 'must be a redis:// or rediss:// URL' }))
      .min(1, { error: 'give at least one seed node, or leave cluster_nodes out for one Redis' })
      .optional(),
  ),
});

const workerSchema = z.strictObject({
  concurrency: withDefault(integer(1), 10),
  lock_duration_ms: withDefault(duration(1000, maxHourMs, '1 hour'), 10_000),
  // BullMQ may skip one stalled check (its guard key lives exactly one interval), so a dead worker's step
  // is taken over within lock + 2 x interval: 14 s with these defaults.
  stalled_interval_ms: withDefault(duration(500, maxHourMs, '1 hour'), 2_000),
  max_stalled_count: withDefault(integer(1), 100),
  /** Attempts of a step that fails with a retryable error. */
  step_attempts: withDefault(integer(1), 5),
  /** Base of the exponential backoff between attempts. */
  backoff_base_ms: withDefault(duration(0, maxDayMs, '1 day'), 1_000),
  backoff_max_ms: withDefault(duration(0, maxDayMs, '1 day'), 60_000),
  /** Grace period after SIGTERM before in-flight steps are abandoned. */
  shutdown_timeout_ms: withDefault(duration(0, maxHourMs, '1 hour'), 30_000),
  /** A step waiting for an answer wakes this often to check (answers normally wake it at once). */
  question_recheck_ms: withDefault(duration(100, maxDayMs, '1 day'), 60_000),
  /** How long finished step jobs are kept. */
  keep_completed_jobs_s: withDefault(duration(0, maxRetentionS, '3650 days'), 86_400),
  /**
   * A worker process whose heartbeat is this old is dead: the locks it holds are released and its steps taken
   * over at once (src/worker/dead-worker-watch.ts). 0: no heartbeats; a dead worker's steps wait for their
   * locks to expire.
   */
  dead_worker_ms: withDefault(z.union([z.literal(0), integer(500, 60_000)]), 2_000),
  /**
   * A registered worker process that has had no connection to Redis for this long is dead, sooner than its
   * heartbeat says (decision 0045): longer than a cut connection takes to come back. 0: heartbeats alone.
   * Not used on a Redis Cluster. 100 to 10000.
   */
  dead_connection_ms: withDefault(z.union([z.literal(0), integer(100, 10_000)]), 300),
  /**
   * A step whose code no live worker has (a tool, provider, extension kind, agent …) for this long shows
   * its run as `waiting_for_worker` (decision 0031); it resumes when a worker that has it appears. 1 s to
   * 1 day.
   */
  capability_wait_s: withDefault(duration(1, 86_400, '1 day'), 60),
  /** The shards this worker consumes (numbers below redis.shards); every shard when absent. */
  shards: z.preprocess(nullAsMissing, z.array(integer(0, 1023)).min(1).optional()),
});

/**
 * How long finished work is kept (docs/config.md, `retention`). 0 keeps for ever. Nothing an unfinished run
 * needs is ever removed: a session with an active run or a pending question is never idle.
 */
const retentionSchema = z.strictObject({
  /** A finished run's record, journal and own chat, this long after it finished (a week). */
  finished_runs_s: withDefault(duration(0, maxRetentionS, '3650 days'), 604_800),
  /** A session with no active run and no pending question, this long after it was last active (30 days). */
  idle_sessions_s: withDefault(duration(0, maxRetentionS, '3650 days'), 2_592_000),
  /** How often one worker looks for expired data (a BullMQ job scheduler: one sweep per interval overall). */
  sweep_interval_s: withDefault(duration(1, 86_400, '1 day'), 300),
  /** Runs or sessions removed per Redis round trip of a sweep. */
  batch_size: withDefault(integer(1, 10_000), 100),
});

/** A host name or address as a Host header carries it, without scheme or port; IPv6 in brackets or not. */
const allowedHostSchema = z.string().refine(isHostNameOrAddress, {
  error: 'must be a host name or address without scheme or port, such as ratchet.internal or 10.0.0.5',
});

function isHostNameOrAddress(value: string): boolean {
  const bracketed = /^\[(.*)\]$/.exec(value);
  if (bracketed) return isIP(bracketed[1] ?? '') === 6;
  if (value.includes(':')) return isIP(value) === 6;
  return /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?$/.test(value);
}

/** An origin a browser sends (`scheme://host[:port]`, http or https, nothing after the host), as given. */
const allowedOriginSchema = z.string().refine((value) => originOf(value) !== undefined, {
  error:
    'must be an origin: http:// or https://, a host and an optional port, nothing after (https://ui.example:8443)',
});

const tokenValueSchema = z.string().min(16, { error: 'must be at least 16 characters' });

/** An `api.tokens` entry: an operator token, or a token scoped to one tenant. */
const apiTokenSchema = z.union([
  tokenValueSchema,
  z.strictObject({ token: tokenValueSchema, tenant: tenantNameSchema }),
]);
export type ApiTokenEntry = z.output<typeof apiTokenSchema>;

/** The longest `api.idempotency_ttl_s`: 30 days. */
export const maxIdempotencyTtlS = 2_592_000;

/**
 * A tenant's settings (`tenants.<name>`; a `default` entry for every tenant not named). Fair admission and
 * token budgets enforce them (decision 0038).
 */
const tenantSettingsSchema = z.strictObject({
  /** Runs of the tenant admitted at once (root runs; child runs count but never wait); none: no limit. */
  max_active_runs: z.preprocess(nullAsMissing, integer(1, 1_000_000).optional()),
  /** Input plus output tokens the tenant's model calls may use per minute; none: no budget. */
  tokens_per_minute: z.preprocess(nullAsMissing, integer(1, 1_000_000_000).optional()),
  /** The tenant's share of admission against the others' (1 to 1000). */
  weight: withDefault(integer(1, 1000), 1),
});
export type TenantSettings = z.output<typeof tenantSettingsSchema>;

/** `api.mcp_toolboxes`: the toolbox MCP server on the API (off by default: it runs tools in the API process). */
const mcpToolboxesSchema = z
  .strictObject({
    enabled: withDefault(z.boolean(), false),
    /** Toolbox names: built-in ones (not state, tasks, notes, waits) and those registered in code. */
    toolboxes: withDefault(z.array(z.string().min(1).max(100)).max(50), []),
    /** Tools whose calls a person approves first (besides those an agent marks `requires_approval`). */
    requires_approval: withDefault(z.array(z.string().min(1).max(200)).max(1_000), []),
  })
  .refine((section) => !section.enabled || section.toolboxes.length > 0, {
    error: 'name the toolboxes to serve in toolboxes (e.g. [filesystem, search]), or set enabled: false',
    path: ['toolboxes'],
  });

/**
 * Fair admission across tenants (decision 0038). With a cap, or any tenant's `max_active_runs`, root runs
 * past it wait as `queued` and are admitted by weighted fair share as slots free.
 */
const admissionSchema = z.strictObject({
  /**
   * Root runs of all tenants admitted at once (1 to 1,000,000); none: no cap of the deployment's (only the
   * tenants' own `max_active_runs` hold runs back). Set it near the workers' total concurrency to make
   * tenants share the workers by weight.
   */
  max_active_runs: z.preprocess(nullAsMissing, integer(1, 1_000_000).optional()),
  /** How often a queued run's first step checks its admission, a safety net for a lost wake-up (1 to 3600 s). */
  recheck_s: withDefault(integer(1, 3600), 30),
  /** How often a worker releases the slots of runs that ended without releasing them (1 to 3600 s). */
  sweep_s: withDefault(integer(1, 3600), 5),
});
export type AdmissionSettings = z.output<typeof admissionSchema>;

const apiSchema = z.strictObject({
  host: withDefault(z.string().min(1), '127.0.0.1'),
  port: withDefault(integer(0, 65_535), 8080),
  /**
   * Bearer tokens accepted by the API; none configured = no authentication (local use only). A plain string
   * is an operator token (every tenant); `{token, tenant}` a scoped one, which submits only as its tenant and
   * sees only its tenant's runs and sessions (decision 0035).
   */
  tokens: withDefault(z.array(apiTokenSchema), []),
  /**
   * How long an `Idempotency-Key` of a submission is remembered, in seconds (1 s to 30 days): within it the
   * same key answers with the run it first created.
   */
  idempotency_ttl_s: withDefault(integer(1, maxIdempotencyTtlS), 86_400),
  /**
   * Host names (or addresses) clients reach the API (and a worker's metrics listener) by, besides the
   * loopback names and the bound address: requests whose Host names another host get 403 (DNS rebinding).
   * Without tokens the check always applies; with tokens only when this list is set.
   */
  allowed_hosts: withDefault(z.array(allowedHostSchema), []),
  /**
   * Origins (`https://ui.example`) of pages besides the API's own whose requests are accepted: a request whose
   * `Origin` is neither its own (the host and port of its `Host`) nor listed here gets 403 (DNS rebinding,
   * cross-site requests). Without tokens the check always applies; with tokens only when this list or
   * `allowed_hosts` is set.
   */
  allowed_origins: withDefault(z.array(allowedOriginSchema), []),
  /** Largest request body accepted; larger ones get 413. */
  body_limit_bytes: withDefault(integer(1024), 1_048_576),
  /**
   * Largest `metadata` a client may store on a session (creating one, a run that creates one, or a fork), as
   * JSON bytes; more gets 400 naming the field. Sessions are kept for the retention window.
   */
  max_metadata_bytes: withDefault(integer(64, 16_777_216), 16_384),
  /** Interval of SSE keep-alive comments. */
  keepalive_ms: withDefault(duration(100, maxHourMs, '1 hour'), 15_000),
  /**
   * How long the API waits for one Redis command (and /readyz for its ping) before it answers 503: bounds
   * every request while Redis is away or frozen.
   */
  redis_timeout_ms: withDefault(integer(100, 60_000), 3_000),
  /** Event streams (SSE followers, MCP wait_run progress) one API process serves at once; more get 503. */
  max_followers: withDefault(integer(1, 100_000), 1_000),
  /** Serve bull-board (read-only) at /admin/queues for the step queues of every shard, behind the tokens. */
  admin_queues: withDefault(z.boolean(), false),
  /**
   * Serve the tools of these toolboxes over MCP at /v1/mcp/toolboxes (docs/mcp.md), run in the API process
   * with the config's `tools` settings, to operator tokens only (decision 0041).
   */
  mcp_toolboxes: withDefault(mcpToolboxesSchema, {}),
});

const eventsSchema = z.strictObject({
  /** Cap of each session's event stream (trimmed approximately). */
  max_len: withDefault(integer(100), 10_000),
  /**
   * How long an event sent to POST /v1/events is kept for waits that start later (wait_for_event looks back
   * over it) and how long its id is remembered (the same id again delivers nothing new); decision 0033.
   */
  retention_s: withDefault(duration(1, externalEventLimits.maxRetentionS, '30 days'), 3_600),
  /** At most this many events of one name are kept (the oldest go first). */
  max_kept_per_event: withDefault(integer(1, externalEventLimits.maxKeptPerEvent), 1_000),
});

/** An event that starts a run (decision 0033): each event starts at most one run per trigger. */
const triggerSchema = z.strictObject({
  event: eventNameSchema,
  /** The agent (or team, or handoff group) the run is of. */
  agent: z.string().min(1),
  /**
   * The run's input: text in which `{{payload.a.b}}` is the payload's value at that path (text as is, other
   * values as JSON, absent as nothing), `{{event}}` the event's name and `{{id}}` its id.
   */
  input: z
    .string()
    .min(1)
    .max(externalEventLimits.templateChars, {
      error: `at most ${externalEventLimits.templateChars} characters`,
    }),
});

const logSchema = z.strictObject({
  /**
   * How each process writes its log: `json` (one object a line), `pretty` (one short line each, for a person),
   * or `auto`: pretty when the log goes to a terminal, else JSON. RATCHET_LOG_FORMAT overrides it.
   */
  format: withDefault(
    z.enum(logFormatSettings, { error: `must be ${logFormatSettings.join(', ')}` }),
    'auto',
  ),
});

/**
 * The shape of a config file. References between entries (agent → provider, toolboxes, entry_agent) and
 * unique names are checked by the loader, which sees the whole file even when parts of it fail this schema.
 */
export const configSchema = z.strictObject({
  providers: z.array(providerConfigSchema).min(1, { error: 'define at least one provider' }),
  agents: z.array(agentSchema.superRefine(boundedRuns)).min(1, { error: 'define at least one agent' }),
  entry_agent: z.preprocess(nullAsMissing, z.string().min(1).optional()),
  handoffs: withDefault(z.array(handoffSchema), []),
  teams: withDefault(z.array(teamSchema.superRefine(boundedRounds)), []),
  /** Handoff contracts: what one agent's result must hold when it goes to another, or out of the session. */
  contracts: withDefault(z.array(contractConfigSchema), []),
  /** How deep delegations may nest: a run started by the API is depth 0, the runs it delegates to depth 1. */
  max_delegation_depth: withDefault(integer(0, 100), 5),
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
  retention: withDefault(retentionSchema, {}),
  api: withDefault(apiSchema, {}),
  /** Tenants by name and their settings (decision 0035); `default` holds those of every tenant not named. */
  tenants: withDefault(z.record(tenantNameSchema, tenantSettingsSchema), {}),
  /** Fair admission of root runs across tenants (decision 0038). */
  admission: withDefault(admissionSchema, {}),
  events: withDefault(eventsSchema, {}),
  /** Events that start runs (decision 0033). */
  triggers: withDefault(z.array(triggerSchema).max(100, { error: 'at most 100 triggers' }), []),
  log: withDefault(logSchema, {}),
  /** Settings of the built-in toolboxes (filesystem, search, exec, git, http). */
  tools: withDefault(toolsConfigSchema, {}),
  skills: withDefault(skillsSchema, {}),
  /** MCP servers whose tools become toolboxes named after them; each worker connects to every one. */
  mcp_servers: withDefault(z.array(mcpServerConfigSchema), []),
  /** Traces and metrics (decision 0024): off unless configured. */
  telemetry: withDefault(telemetryConfigSchema, {}),
  /** Signed POSTs of run events to other systems, from a durable queue (decision 0034). */
  webhooks: withDefault(webhooksSchema, []),
  /** Runs started on a timetable (decision 0036): created or updated by id when a process starts. */
  schedules: withDefault(z.array(scheduleConfigSchema).max(1000), []),
});

export type RatchetConfig = z.output<typeof configSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
export type HandoffConfig = z.output<typeof handoffSchema>;
export type TeamConfig = z.output<typeof teamSchema>;
export type RedisConfig = z.output<typeof redisSchema>;
export type WorkerConfig = z.output<typeof workerSchema>;
export type RetentionConfig = z.output<typeof retentionSchema>;
export type EventsConfig = z.output<typeof eventsSchema>;
export type TriggerConfig = z.output<typeof triggerSchema>;
export type ApiConfig = z.output<typeof apiSchema>;
export type { TelemetryConfig } from './telemetry-config-schema.js';
export type ToolboxReference = z.output<typeof toolboxReferenceSchema>;
