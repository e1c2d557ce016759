import type { JsonSchemaSubset } from '../../../config/index.js';
import type { AnyContractRule, ConfiguredMiddleware } from '../../../extensions/index.js';
import type { Logger } from '../../../log/index.js';
import type { Completer, ToolDefinition } from '../../../models/completer.js';
import type { Price } from '../../../models/pricing.js';
import type { BaseProviderConfig } from '../../../models/provider-registry.js';
import type { ToolBox } from '../../../tools/index.js';
import type { AgentDefinition } from '../../agent-definition.js';
import type { ContractCheck } from '../../core/contracts.js';
import type { ResolvedEffect } from '../../core/effects/index.js';
import type { DefinitionToRecord } from '../../core/run-creation.js';
import type { SupervisorLimits } from '../../core/supervisor.js';
import type { TeamRuntime } from '../../core/team.js';
import type { HandoffGroup } from '../../handoff-toolbox.js';
import type { Budget } from '../../run-record.js';
import type { StepScheduler } from '../../step-scheduler.js';
import type { RateLimiter } from './rate-limiter.js';
import type { RunAdmission } from './run-admission.js';
import type { StepObserver } from './step-observer.js';
import type { StepStore, StepStores } from './step-store.js';

/** What a worker knows about an agent: its settings, its model and its tools. */
export interface AgentRuntime {
  name: string;
  /** What the agent does, for other agents choosing whom to delegate to. */
  description: string;
  /** Display prefix in clients. */
  prefix: string;
  instructions: string;
  maxIterations: number;
  /** Stream the model's text as text_delta events. */
  stream: boolean;
  /** Limits of each run of the agent. */
  budget: Budget | undefined;
  /** How long a run of the agent may take, its child runs included (`options.timeout_s`); none when absent. */
  timeoutS: number | undefined;
  /** How deep its delegations may go (`options.max_delegation_depth`); the global limit applies too. */
  maxDelegationDepth: number | undefined;
  /** What runs around each of its model requests (`effects`, defaults filled in), in the order they run. */
  effects: readonly ResolvedEffect[];
  /** Its sub-goal limits when it supervises (`options.supervisor`); none when it does not. */
  supervisor: SupervisorLimits | undefined;
  /** The JSON Schema its final answers match (`options.output_schema`), asked of the provider; none when absent. */
  outputSchema: JsonSchemaSubset | undefined;
  /** The version of that schema (`options.output_schema_version`), named in its results' metadata. */
  outputSchemaVersion?: string | undefined;
  completer: Completer;
  toolboxes: readonly ToolBox[];
  /**
   * The delegation tools, when the agent leaves `options.delegate` to its default (and is no supervisor):
   * `toolboxes` has them as this worker's config decides; a run whose recorded default says otherwise
   * (decision 0047) adds or drops them. Absent when the agent's own settings decide.
   */
  defaultDelegation?: ToolBox | undefined;
  /** What the model is offered: one definition per tool name, first toolbox wins. */
  tools: readonly ToolDefinition[];
  /** The provider the agent calls, with its shared limits and the context window of its model (0 = unknown). */
  provider: {
    name: string;
    /** The provider's kind (`openai`, `scripted` …): `gen_ai.provider.name` of its spans. */
    kind?: string;
    model: string;
    rateLimit: BaseProviderConfig['rate_limit'];
    contextWindow: number;
    /** The model's price (config `pricing`), when it has one. */
    price: Price | undefined;
  };
  /** Tools whose calls wait for a person's approval. */
  approvalTools: ReadonlySet<string>;
  /** What runs around each of its model and tool calls (`middleware`), the first outermost; none when absent. */
  middleware?: readonly ConfiguredMiddleware[] | undefined;
  /** The providers a middleware may route its requests to, by name (only for agents with middleware). */
  providerRoutes?: ReadonlyMap<string, ProviderRoute> | undefined;
}

/** A provider a model request may be sent to: its completer and what the engine knows of it. */
export interface ProviderRoute {
  completer: Completer;
  provider: AgentRuntime['provider'];
}

/** A team, with the model its `llm` coordinator calls (an agent of its own, without tools). */
export interface TeamService extends TeamRuntime {
  coordinatorAgent: AgentRuntime | undefined;
  /** The team's `options.timeout_s`: how long its runs may take, its members' runs included. */
  timeoutS: number | undefined;
}

/**
 * The definitions runs work under (decision 0030): this worker's current ones, and recorded ones, read once
 * per hash and process and built with this worker's code (its toolboxes, middleware, effects and provider
 * credentials by name).
 */
export interface DefinitionRuntimes {
  /** This worker's config's definition of an agent, handoff group or team: what a run it starts records. */
  current(name: string): (DefinitionToRecord & { definition: AgentDefinition }) | undefined;
  /** Whether a hash is one of this worker's current definitions (its config's runtimes serve it). */
  isCurrent(hash: string): boolean;
  /** Reads a recorded definition unless held (a round trip only the first time a process meets a hash). */
  prepare(hash: string): Promise<void>;
  /** A prepared definition; undefined when `prepare` was not called for it. */
  pinned(hash: string): PinnedDefinition | undefined;
  /**
   * Stores one of this worker's current definitions unless it is there (once per process and hash): an
   * upgrade records the definition it moves a run to before its commit names it, so any worker can read it.
   */
  record(definition: DefinitionToRecord): Promise<void>;
}

/** A recorded definition as a worker runs it. */
export interface PinnedDefinition {
  definition: AgentDefinition;
  /** An agent the run works as (the agent itself, or a handoff group's member), built once; undefined: none. */
  agent(name: string): AgentRuntime | undefined;
  /** A handoff group's run: the group as recorded. */
  handoff: HandoffGroup | undefined;
  /** A team's run: the team as recorded (its coordinator and members), built once; undefined: not a team. */
  team(): TeamService | undefined;
  /** The handoff contracts as recorded (the run is checked against these, not this worker's config's). */
  contracts: readonly ContractCheck[];
}

/** Long-lived parts every step uses, built once per worker process. */
export interface StepServices {
  /** Opens each execution's store (its reads and fenced commits): the steps' only way to Redis. */
  stores: StepStores;
  /** Adds the next steps, wakes parked ones, cancels runs: the engine's face for steps. */
  scheduler: StepScheduler;
  agents: ReadonlyMap<string, AgentRuntime>;
  /** Handoff groups by name (run like agents). */
  handoffs: ReadonlyMap<string, HandoffGroup>;
  /** Teams by name (run like agents). */
  teams: ReadonlyMap<string, TeamService>;
  limiter: RateLimiter;
  /** How often a step waiting for an answer wakes to check (a safety net: an answer promotes it at once). */
  questionRecheckMs: number;
  /** How deep delegations may nest (a root run is depth 0, its children depth 1). */
  maxDelegationDepth: number;
  /** The handoff contracts (`contracts:`), compiled once. */
  contracts: readonly ContractCheck[];
  /** The contract rule kinds written in code (`extensions.contractRules`), by kind; absent: none. */
  contractRules?: ReadonlyMap<string, AnyContractRule> | undefined;
  now: () => Date;
  /** This worker's `redis.prefix`: named when it takes a step its config cannot run (another config's). */
  keyPrefix: string;
  /** This worker process's id in the worker registry: each step's attempts record names it (decision 0019). */
  workerId: string;
  /** Traces and metrics (decision 0024); absent when telemetry is off. */
  observer?: StepObserver | undefined;
  /** The definitions runs work under (decision 0030); absent: every run uses this worker's config. */
  definitions?: DefinitionRuntimes | undefined;
  /** Fair admission of root runs (decision 0038); absent when the config limits nothing. */
  admission?: RunAdmission | undefined;
  /** Each tenant's token budget per minute (`tenants.<name>.tokens_per_minute`, `default` for the rest). */
  tenantBudgets?: TenantBudgets | undefined;
  /**
   * Ends a run's wait for a worker (decision 0031), once: a step that loaded its run recorded as
   * `waiting_for_worker` runs on a worker that serves it, so the wait is over. Absent: nothing ends it here.
   */
  endWorkerWait?: ((jobId: string, sessionId: string, runId: string) => Promise<void>) | undefined;
}

/** The tenants' token budgets: tokens per minute of a tenant, or undefined when it has none. */
export type TenantBudgets = (tenant: string) => number | undefined;

/** One execution of one step job. */
export interface StepContext {
  services: StepServices;
  jobId: string;
  /** The session of the step's run (every step job names it). */
  sessionId: string;
  /**
   * The job's lock token this execution holds: the store fences every commit with it (a worker that lost the
   * job writes nothing), and a tool call's intent records it, to tell this execution's intent from another's.
   */
  lockToken: string;
  /** The reads and commits of this execution on its run (opened once from the job). */
  store: StepStore;
  /** 1-based number of this attempt (stalls do not count, failures do). */
  attempt: number;
  /** How many times the job has been started (stalls and parking included). */
  started: number;
  /** Aborted on shutdown, on the run's cancellation, and at the run's deadline. */
  signal: AbortSignal;
  /** The run's deadline (ms since the epoch), from the job: no step parks past it. */
  deadlineMs: number | undefined;
  logger: Logger;
}
