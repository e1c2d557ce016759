import type { Telemetry } from 'bullmq';
import type { Part } from '../chat/index.js';
import type { TriggerConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import type { KeySpace } from '../redis/keys.js';
import type { AdmissionPolicy } from '../redis/run-admission.js';
import type { StepJobSettings } from '../redis/step-queues.js';
import type { OnBusy } from '../schemas/index.js';
import type { Tool } from '../tools/index.js';
import type { Budget, DefinitionToRecord } from '../workflows/index.js';

export interface EngineOptions {
  /** A connection for commands (not blocking); the engine does not close it. */
  redis: RedisClient;
  space: KeySpace;
  jobs: StepJobSettings;
  eventsMaxLength: number;
  /** Agent names a run may be started with; the first is the default. */
  agents: readonly string[];
  defaultAgent: string;
  logger: Logger;
  now?: () => Date;
  /** The names among `agents` that are teams (their runs are chains of team turns). */
  teams?: readonly string[];
  /** Display prefix of each agent in clients (config `prefix`). */
  prefixes?: Readonly<Record<string, string>>;
  /** The tool an agent would call by that name: lets `respond` check edited arguments of an approval. */
  findTool?: (agent: string, toolName: string) => Tool | undefined;
  /** Event followers served at once (config `api.max_followers`); default 1000. */
  maxFollowers?: number;
  /** The most a session's metadata may hold, as JSON bytes (config `api.max_metadata_bytes`); default 16384. */
  maxMetadataBytes?: number;
  /** Each agent's (and team's) `options.timeout_s`, where it has one: how long its runs may take. */
  timeouts?: Readonly<Record<string, number>>;
  /** Each agent's `options.max_iterations` (a run may ask for fewer, never more). */
  maxIterations?: Readonly<Record<string, number>>;
  /** Each agent's `options.on_busy`: what a message to its busy session does by default (decision 0032). */
  onBusy?: Readonly<Record<string, OnBusy>>;
  /** Each agent's `options.max_queued_messages`: how many messages its session may hold waiting. */
  maxQueuedMessages?: Readonly<Record<string, number>>;
  /** Each agent's and team's `budget`, where it has one (a run's own budget may not be larger; a team's run keeps its team's). */
  budgets?: Readonly<Record<string, Budget>>;
  /**
   * The resolved definition of each agent, handoff group and team (decision 0030), recorded with each run
   * started here; absent (an engine built without a config): runs record none and use their workers' config.
   */
  definitions?: ReadonlyMap<string, DefinitionToRecord>;
  /**
   * `options.delegate` of an agent that does not set it, as this config decides it (more than one agent):
   * recorded with each root run started here, and inherited by the runs below it (decision 0047).
   */
  delegateDefault?: boolean;
  /** How long a submission's idempotency key is remembered, in seconds (config `api.idempotency_ttl_s`); default 86400. */
  idempotencyTtlS?: number;
  /** BullMQ's queue spans (its telemetry interface, src/telemetry/queue-telemetry.ts), when traces are on: a worker's engine adds its steps' jobs. */
  queueTelemetry?: Telemetry;
  /** Events from outside (config `events.retention_s`, `events.max_kept_per_event`, `triggers`; decision 0033). */
  externalEvents?: ExternalEventSettings;
  /** Fair admission of root runs (config `admission:` and `tenants:`, decision 0038); absent: none. */
  admission?: AdmissionPolicy;
}

export interface StartRunInput {
  input: string | Part[];
  agent?: string;
  /** Continue this session's chat; a new session is created when omitted. */
  sessionId?: string;
  /** Stored on a new session. */
  metadata?: Record<string, unknown>;
  /** Limits of the run's model usage (the agent's budget applies too). */
  budget?: Budget;
  /** Seconds the run may take, its children included: at most the agent's `options.timeout_s`. */
  timeoutS?: number;
  /** Model calls the run may make: at most the agent's `options.max_iterations`. */
  maxIterations?: number;
  /** The tenant the run (and a new session) belongs to; default `default`. A session's runs are its tenant's. */
  tenant?: string;
  /** The run's priority within its tenant, 1 to 10; default 5. */
  priority?: number;
  /**
   * A key that makes the submission idempotent (decision 0035): within `idempotencyTtlS` the same key (of
   * the same tenant, for the same session or for a new one) answers with the run it first started, and is
   * refused (`idempotency_key_reused`) when the rest of the input differs.
   */
  idempotencyKey?: string;
}

export interface StartedRun {
  runId: string;
  sessionId: string;
  /** true: an earlier submission with the same idempotency key started this run; nothing new was started. */
  replayed?: boolean;
}

/** What the engine keeps of events from outside (config `events`, `triggers`; decision 0033). */
export interface ExternalEventSettings {
  retentionS: number;
  maxKeptPerEvent: number;
  triggers: readonly TriggerConfig[];
}
