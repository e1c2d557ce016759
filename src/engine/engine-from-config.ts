import type { Telemetry } from 'bullmq';
import { type RatchetConfig, registerConfigSecrets, resolveEntryAgent } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import { admissionPolicyOf } from '../redis/run-admission.js';
import { finalFailureHeadroom, type StepJobSettings } from '../redis/step-queues.js';
import type { Tool } from '../tools/index.js';
import { definitionsOf, delegateDefaultOf } from '../workflows/index.js';
import { Engine } from './engine.js';

/**
 * BullMQ attempts of a step job: enough for the worker's step attempts and for every provider's own
 * `rate_limit.max_retries`, plus the headroom used only to record a final failure.
 */
export function stepJobSettings(config: RatchetConfig): StepJobSettings {
  const providerAttempts = config.providers.map((provider) => (provider.rate_limit?.max_retries ?? 0) + 1);
  return {
    attempts: Math.max(config.worker.step_attempts, ...providerAttempts) + finalFailureHeadroom,
    keepCompletedSeconds: config.worker.keep_completed_jobs_s,
  };
}

/** An agent's `options.max_iterations` as a limit: 0 is none (the config allows it with a deadline or budget). */
export function iterationLimit(maxIterations: number): number {
  return maxIterations === 0 ? Number.POSITIVE_INFINITY : maxIterations;
}

/**
 * The engine every process (worker, API, CLI, tests) builds from the config, with the same settings. The
 * config's secrets are registered for redaction, whatever built the config.
 */
export function engineFromConfig(options: {
  config: RatchetConfig;
  redis: RedisClient;
  logger: Logger;
  findTool?: (agent: string, toolName: string) => Tool | undefined;
  queueTelemetry?: Telemetry;
}): Engine {
  const { config } = options;
  registerConfigSecrets(config);
  const admission = admissionPolicyOf(config);
  return new Engine({
    redis: options.redis,
    space: { prefix: config.redis.prefix, shards: config.redis.shards },
    jobs: stepJobSettings(config),
    eventsMaxLength: config.events.max_len,
    agents: [...config.agents, ...config.handoffs, ...config.teams].map((agent) => agent.name),
    defaultAgent: resolveEntryAgent(config),
    teams: config.teams.map((team) => team.name),
    prefixes: Object.fromEntries(
      [...config.agents, ...config.handoffs, ...config.teams].map((agent) => [agent.name, agent.prefix]),
    ),
    logger: options.logger,
    maxFollowers: config.api.max_followers,
    maxMetadataBytes: config.api.max_metadata_bytes,
    idempotencyTtlS: config.api.idempotency_ttl_s,
    timeouts: Object.fromEntries(
      [...config.agents, ...config.teams].flatMap((agent) =>
        agent.options.timeout_s === undefined ? [] : [[agent.name, agent.options.timeout_s]],
      ),
    ),
    maxIterations: Object.fromEntries(
      config.agents.map((agent) => [agent.name, iterationLimit(agent.options.max_iterations)]),
    ),
    onBusy: Object.fromEntries(config.agents.map((agent) => [agent.name, agent.options.on_busy])),
    maxQueuedMessages: Object.fromEntries(
      config.agents.map((agent) => [agent.name, agent.options.max_queued_messages]),
    ),
    budgets: Object.fromEntries(
      [...config.agents, ...config.teams].flatMap((agent) =>
        agent.budget === undefined ? [] : [[agent.name, agent.budget]],
      ),
    ),
    externalEvents: {
      retentionS: config.events.retention_s,
      maxKeptPerEvent: config.events.max_kept_per_event,
      triggers: config.triggers,
    },
    definitions: definitionsOf(config),
    delegateDefault: delegateDefaultOf(config),
    ...(admission ? { admission } : {}),
    ...(options.findTool ? { findTool: options.findTool } : {}),
    ...(options.queueTelemetry ? { queueTelemetry: options.queueTelemetry } : {}),
  });
}
