import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type LoadedConfig, registerConfigSecrets } from '../config/index.js';
import { type Engine, engineFromConfig } from '../engine/index.js';
import type { Extensions } from '../extensions/index.js';
import type { Logger } from '../log/index.js';
import { McpServers, redisToolListings } from '../mcp/client/index.js';
import { listenForCancellations } from '../redis/cancel-run.js';
import type { RedisClient } from '../redis/connection.js';
import { closeRedis, createRedis, redisTargetOf } from '../redis/connection.js';
import { DefinitionStore } from '../redis/definition-store.js';
import { type KeySpace, shardOf, shardPrefix, stepQueueName } from '../redis/keys.js';
import { RedisRateLimiter } from '../redis/rate-limiter.js';
import { redisOutageLog } from '../redis/redis-outage.js';
import { redisStepStores } from '../redis/step-store.js';
import { createTelemetry, type Telemetry, telemetrySettings } from '../telemetry/index.js';
import { QueueTelemetry } from '../telemetry/queue-telemetry.js';
import type { ToolBox } from '../tools/index.js';
import {
  compileContracts,
  definitionsOf,
  type RetrySettings,
  type StepServices,
} from '../workflows/index.js';
import { buildRegistry, toolLookup } from './build-agents.js';
import { CapabilityGate, needsOfRecorded } from './capability-gate.js';
import { DeadWorkerWatch, workerConnectionName } from './dead-worker-watch.js';
import { backoffStrategy, createStepProcessor, stallHeadroom } from './process-step.js';
import { QueuedRunStarter } from './queued-run-starter.js';
import { RetentionSweeper } from './retention-sweeper.js';
import { RunCancellations } from './run-cancellations.js';
import { withRunEndListeners } from './run-end-observer.js';
import { ScheduleFirer } from './schedule-firer.js';
import { StepWorker } from './step-worker.js';
import { tenantBudgetsOf } from './tenant-budgets.js';
import { WebhookService } from './webhooks/webhook-service.js';
import { workerCapabilities } from './worker-capabilities.js';
import { WorkerDefinitions } from './worker-definitions.js';

export interface RatchetWorkerOptions {
  loaded: LoadedConfig;
  /** Toolboxes registered from code, beside the built-in ones (which the config's `tools` section sets up). */
  toolboxes: readonly ToolBox[];
  logger: Logger;
  /** Overrides `worker.concurrency` of the config. */
  concurrency?: number;
  /**
   * Effects, coordinators and stop conditions written in code (docs/extending.md), which the config may name.
   * Give the same ones to `loadConfig`. Default: those `loaded` was validated with.
   */
  extensions?: Extensions;
}

/** A worker process's engine side: one BullMQ worker per shard, running every step kind. */
export class RatchetWorker {
  private readonly workers: StepWorker[] = [];
  private readonly workerConnections: RedisClient[] = [];
  private commands: RedisClient | undefined;
  private subscriber: RedisClient | undefined;
  private engine: Engine | undefined;
  private mcpServers: McpServers | undefined;
  /** The built-in toolboxes the registry built, closed at shutdown (the browser's Chromium). */
  private builtinToolboxes: ToolBox[] = [];
  private retention: RetentionSweeper | undefined;
  /** Frees admission slots of runs that ended without freeing them (decision 0038); off without admission. */
  private admissionSweep: NodeJS.Timeout | undefined;
  private scheduleFirer: ScheduleFirer | undefined;
  private queuedRuns: QueuedRunStarter | undefined;
  private deadWorkerWatch: DeadWorkerWatch | undefined;
  /** The webhook dispatcher and deliveries, when the config has webhooks (decision 0034). */
  private webhooks: WebhookService | undefined;
  private capabilityGate: CapabilityGate | undefined;
  private telemetry: Telemetry | undefined;
  /** BullMQ's queue spans (its telemetry interface, src/telemetry/queue-telemetry.ts), when traces are on. */
  private queueTelemetry: QueueTelemetry | undefined;
  private shuttingDown = false;
  private closing: Promise<void> | undefined;
  /** This process's id in the worker registry; each step's attempts record names it (decision 0019). */
  readonly workerId = randomUUID();

  constructor(private readonly options: RatchetWorkerOptions) {}

  async start(): Promise<void> {
    const { config, configDir } = this.options.loaded;
    const { logger } = this.options;
    // Before anything can log or record: the config may not have come from loadConfig or parseConfigText.
    registerConfigSecrets(config);
    const space: KeySpace = { prefix: config.redis.prefix, shards: config.redis.shards };
    // Commands sent in one event-loop turn leave in one write (coalesceWrites), here, on the step queues'
    // connection (a duplicate of this one) and on BullMQ's. Not ioredis' auto-pipelining: each of its
    // batches costs a Pipeline object, into which ioredis copies every script defined on the connection.
    // Measured on the tool loop at 50 runs in flight: no auto-pipelining, 8% less worker CPU, 12% more
    // steps/s; coalesced writes on top, 11% less worker CPU and 13% less Redis CPU.
    const commands = createRedis({
      ...redisTargetOf(config.redis),
      logger,
      // Others see this process alive while Redis lists a connection by this name (decision 0045).
      name: workerConnectionName(this.workerId),
      batching: 'per-turn',
    });
    this.commands = commands;
    // MCP servers are connected before the first step runs, so their tools are offered from the start.
    const mcpServers = new McpServers({
      servers: config.mcp_servers,
      configDir,
      logger,
      listings: redisToolListings(commands, space),
    });
    this.mcpServers = mcpServers;
    await mcpServers.start();
    if (this.shuttingDown) return;
    const extensions = this.options.extensions ?? (this.options.loaded.extensions as Extensions | undefined);
    const registry = buildRegistry(
      config,
      configDir,
      [...this.options.toolboxes, ...mcpServers.toolboxes],
      logger,
      extensions,
    );
    const { agents, handoffs, teams, builtinToolboxes } = registry;
    const capabilities = workerCapabilities({
      config,
      registry,
      toolboxes: [...this.options.toolboxes, ...mcpServers.toolboxes],
      extensions,
    });
    this.builtinToolboxes = builtinToolboxes;
    const definitions = new WorkerDefinitions({
      store: new DefinitionStore(commands, space),
      current: definitionsOf(config),
      registry,
      describe: (name) =>
        [...config.agents, ...config.handoffs, ...config.teams].find((entry) => entry.name === name)
          ?.description ?? '',
      env: process.env,
    });
    const traces = telemetrySettings(config.telemetry, process.env).traces;
    const queueTelemetry = traces?.queueSpans ? new QueueTelemetry(traces, this.workerId) : undefined;
    this.queueTelemetry = queueTelemetry;
    const engine = engineFromConfig({
      config,
      redis: commands,
      logger,
      findTool: toolLookup(agents),
      ...(queueTelemetry ? { queueTelemetry: queueTelemetry.telemetry } : {}),
    });
    this.engine = engine;
    this.telemetry = createTelemetry({
      config: config.telemetry,
      env: process.env,
      logger,
      instanceId: this.workerId,
    });
    // Before any step runs: a port another process holds stops this one before it takes a job.
    const { metrics } = config.telemetry;
    const metricsPort = await this.telemetry?.listen({
      host: metrics.worker_host,
      port: metrics.worker_port,
      allowedHosts: config.api.allowed_hosts,
      allowedOrigins: config.api.allowed_origins,
      token: metrics.worker_token,
    });
    if (metricsPort !== undefined)
      logger.info({ host: metrics.worker_host, port: metricsPort }, 'metrics listening');
    if (this.shuttingDown) {
      // A close that came while the listener started may have closed the telemetry before it: again.
      await this.telemetry?.close();
      return;
    }
    // A run this worker's engine cancels (a delegation's deadline cancels the child) ends here: its span
    // and count, once (decision 0024). Runs cancelled through the API are the API's.
    const telemetry = this.telemetry;
    if (telemetry) engine.onRunCancelled((record) => telemetry.runEnded(record));
    const services: StepServices = {
      stores: redisStepStores(
        commands,
        space,
        config.events.max_len,
        (next) => engine.queues.jobsInCommit(next),
        // A step's last commit completes its job (decision 0056); traced jobs keep BullMQ's own completion
        // and its span. A token names the BullMQ worker that holds the job (`<worker id>:<n>`).
        queueTelemetry
          ? undefined
          : (token) => this.workers.find((worker) => token.startsWith(`${worker.id}:`))?.completionFor(token),
      ),
      scheduler: engine.scheduler(),
      agents,
      handoffs,
      teams,
      questionRecheckMs: config.worker.question_recheck_ms,
      maxDelegationDepth: config.max_delegation_depth,
      contracts: compileContracts(config.contracts),
      contractRules: new Map((extensions?.contractRules ?? []).map((rule) => [rule.kind, rule])),
      limiter: new RedisRateLimiter(commands, space),
      now: () => new Date(),
      workerId: this.workerId,
      keyPrefix: config.redis.prefix,
      definitions,
      admission: engine.admission,
      tenantBudgets: tenantBudgetsOf(config.tenants),
      // Toolboxes an agent uses that hold something per run are told when a run ends (the browser's page).
      observer: withRunEndListeners(
        this.telemetry,
        builtinToolboxes.filter((toolbox) =>
          [...agents.values()].some((agent) => agent.toolboxes.some((used) => used.name === toolbox.name)),
        ),
      ),
    };
    const retry: RetrySettings = {
      attempts: config.worker.step_attempts,
      backoffBaseMs: config.worker.backoff_base_ms,
      backoffMaxMs: config.worker.backoff_max_ms,
    };
    const cancellations = new RunCancellations((jobId, reason) => {
      for (const worker of this.workers) worker.cancelJob(jobId, reason);
    });
    const subscriber = createRedis({
      ...redisTargetOf(config.redis),
      logger,
      name: 'ratchet-worker-cancel',
      batching: 'none',
    });
    this.subscriber = subscriber;
    await listenForCancellations(subscriber, space, (runId) => {
      const aborted = cancellations.cancel(runId);
      if (aborted > 0)
        logger.info({ run_id: runId, steps: aborted }, 'run cancelled: in-flight steps aborted');
    });
    if (this.shuttingDown) return;
    const concurrency = this.options.concurrency ?? config.worker.concurrency;
    const shards = config.worker.shards ?? Array.from({ length: space.shards }, (_, shard) => shard);
    const scheduler = services.scheduler;
    const capabilityGate = new CapabilityGate({
      redis: commands,
      space,
      workerId: this.workerId,
      shards,
      capabilities,
      // A run's recorded definition (decision 0030); by name in this worker's config for the agents above
      // a child run and for runs recorded without one.
      recordedNeeds: async (hash) => {
        try {
          await definitions.prepare(hash);
        } catch {
          return undefined;
        }
        const definition = definitions.pinned(hash)?.definition;
        return definition ? needsOfRecorded(definition) : undefined;
      },
      definitionOf: (name) =>
        config.agents.find((entry) => entry.name === name) ??
        config.handoffs.find((entry) => entry.name === name) ??
        config.teams.find((entry) => entry.name === name),
      waitMs: config.worker.capability_wait_s * 1000,
      recheckMs: config.worker.question_recheck_ms,
      eventsMaxLength: config.events.max_len,
      wake: (sessionId, jobId) => scheduler.wake(sessionId, jobId),
      logger,
    });
    this.capabilityGate = capabilityGate;
    services.endWorkerWait = (jobId, sessionId, runId) =>
      capabilityGate.endWaitOfRunning(jobId, sessionId, runId);
    const processSteps = createStepProcessor({
      services,
      cancellations,
      retry,
      logger,
      isShuttingDown: () => this.shuttingDown,
      maxStalledCount: config.worker.max_stalled_count,
      shardOf: (sessionId) => shardOf(space, sessionId),
      capabilities: capabilityGate,
    });
    // Traces on: each step runs in its run's span, so BullMQ's spans join the run's trace (decision 0024).
    const processor: typeof processSteps = queueTelemetry
      ? (job, token, signal) =>
          queueTelemetry.withRun({ id: job.data.run_id, root_run_id: job.data.root_run_id ?? null }, () =>
            processSteps(job, token, signal),
          )
      : processSteps;
    // Its blocking connections fail on every retry while Redis is away: one outage, told once.
    const outage = redisOutageLog(logger);
    for (const shard of shards) {
      // A template BullMQ duplicates (its duplicates coalesce their writes too); it never connects itself.
      const connection = createRedis({
        ...redisTargetOf(config.redis),
        logger,
        name: `ratchet-worker-${shard}`,
        batching: 'per-turn',
        lazy: true,
      });
      this.workerConnections.push(connection);
      const worker = new StepWorker(stepQueueName, processor, {
        connection,
        prefix: shardPrefix(space, shard),
        concurrency,
        lockDuration: config.worker.lock_duration_ms,
        stalledInterval: config.worker.stalled_interval_ms,
        maxStalledCount: config.worker.max_stalled_count + stallHeadroom,
        settings: { backoffStrategy: backoffStrategy(retry) },
        autorun: false,
        ...(queueTelemetry ? { telemetry: queueTelemetry.telemetry } : {}),
      });
      worker.on('error', (error) => {
        if (!outage.absorb(error)) logger.error({ err: error, shard }, 'worker error');
      });
      worker.on('failed', (job, error) => {
        if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
          logger.error({ err: error, job_id: job.id, step: job.name }, 'step job failed for good');
        }
      });
      worker.on('stalled', (jobId) => {
        logger.warn({ job_id: jobId, shard }, 'step job stalled: taken over');
        this.telemetry?.takeover(shard);
      });
      this.workers.push(worker);
    }
    for (const worker of this.workers) {
      worker.run().catch((error: unknown) => logger.error({ err: error }, 'worker stopped with an error'));
    }
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
    if (this.shuttingDown) return;
    if (config.worker.dead_worker_ms > 0) {
      this.deadWorkerWatch = new DeadWorkerWatch({
        redis: commands,
        space,
        workers: this.workers.map((worker, index) => ({ shard: shards[index] as number, worker })),
        id: this.workerId,
        about: { host: hostname(), concurrency, shards, capabilities },
        deadAfterMs: config.worker.dead_worker_ms,
        ...(config.worker.dead_connection_ms > 0 && !config.redis.cluster_nodes
          ? {
              connections: {
                name: workerConnectionName(this.workerId),
                goneAfterMs: config.worker.dead_connection_ms,
              },
            }
          : {}),
        logger,
        onDeadWorkers: (count) => this.telemetry?.deadWorkersNoticed(count),
      });
      await this.deadWorkerWatch.start();
    }
    if (this.shuttingDown) return;
    // After the registry entry: a step this worker wakes is one the others can see it serves.
    await capabilityGate.start(capabilityLookMs(config.worker.capability_wait_s));
    if (this.shuttingDown) return;
    this.retention = new RetentionSweeper({
      commands,
      connection: createRedis({
        ...redisTargetOf(config.redis),
        logger,
        name: 'ratchet-worker-retention',
        lazy: true,
      }),
      space,
      settings: config.retention,
      logger,
      ...(engine.admission
        ? { releaseRemoved: (runIds: readonly string[]) => engine.releaseRemovedRuns(runIds) }
        : {}),
    });
    await this.retention.start();
    if (this.shuttingDown) return;
    if (engine.admission) {
      let sweeping = false;
      this.admissionSweep = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        engine
          .sweepAdmission()
          .catch((error: unknown) => logger.warn({ err: error }, 'admission sweep failed; trying again'))
          .finally(() => {
            sweeping = false;
          });
      }, config.admission.sweep_s * 1000);
      this.admissionSweep.unref();
    }
    if (config.webhooks.length > 0) {
      this.webhooks = new WebhookService({
        config,
        space,
        shards,
        commands,
        logger,
        consumer: this.workerId,
      });
      await this.webhooks.start();
      if (this.shuttingDown) return;
    }
    // Config schedules by id, then their fires (decision 0036); API processes sync them too.
    await engine.schedules().syncConfig(config.schedules);
    const scheduleConnection = createRedis({
      ...redisTargetOf(config.redis),
      logger,
      name: 'ratchet-worker-schedules',
      lazy: true,
    });
    this.workerConnections.push(scheduleConnection);
    this.scheduleFirer = new ScheduleFirer({
      engine,
      space,
      connection: scheduleConnection,
      logger,
      lockDurationMs: config.worker.lock_duration_ms,
      stalledIntervalMs: config.worker.stalled_interval_ms,
      maxStalledCount: config.worker.max_stalled_count + stallHeadroom,
    });
    await this.scheduleFirer.start();
    if (this.shuttingDown) return;
    this.queuedRuns = new QueuedRunStarter({ engine, shards, logger });
    this.queuedRuns.start();
    logger.info(
      {
        shards,
        concurrency,
        agents: [...agents.keys()],
        // The ids BullMQ puts at the start of this process's job lock tokens (who holds a step).
        bullmq_worker_ids: this.workers.map((worker) => worker.id),
      },
      'worker started',
    );
  }

  /** The longest close() takes with this deadline: the deadline, then the hand-back and the connections. */
  shutdownBoundMs(deadlineMs = this.options.loaded.config.worker.shutdown_timeout_ms): number {
    return deadlineMs + shutdownGraceMs + minimumCloseMs;
  }

  /**
   * Stops taking jobs and lets in-flight steps finish; after the deadline their AbortSignals fire and they
   * are handed back to the queue (another worker takes them). Resolves when everything is closed, and in
   * every state within `shutdownBoundMs()`: a start still under way stops at its next step, and what
   * waits on an unreachable Redis (a hand-back, a quit) is given up and its connection dropped — a step
   * not handed back is taken over by another worker when its lock expires. Never rejects.
   */
  close(deadlineMs = this.options.loaded.config.worker.shutdown_timeout_ms): Promise<void> {
    this.closing ??= this.shutdown(deadlineMs);
    return this.closing;
  }

  private async shutdown(deadlineMs: number): Promise<void> {
    this.shuttingDown = true;
    const { logger } = this.options;
    const startedAt = Date.now();
    const abortAt = startedAt + deadlineMs;
    const endBy = abortAt + shutdownGraceMs;
    const bounded = (what: string, work: Promise<unknown> | undefined, byMs: number) =>
      settleWithin(work, byMs - Date.now(), logger, what);
    const workers = [...this.workers];
    const abortTimer = setTimeout(() => {
      logger.warn('shutdown deadline reached: aborting in-flight steps');
      for (const worker of workers) worker.cancelAllJobs('worker shutting down');
    }, deadlineMs);
    this.capabilityGate?.close();
    if (this.admissionSweep) clearInterval(this.admissionSweep);
    // Off the registry first: a process that stops cleanly hands its steps back itself.
    await bounded(
      'the dead worker watch',
      this.deadWorkerWatch?.close(),
      Math.min(startedAt + handBackGraceMs, endBy),
    );
    try {
      const drained = await bounded(
        'the step workers',
        Promise.allSettled([...workers.map((worker) => worker.close()), this.scheduleFirer?.close()]),
        abortAt + handBackGraceMs,
      );
      if (!drained) {
        logger.warn(
          'shutdown deadline passed with Redis unreachable (or a step ignoring its abort): steps still held ' +
            'were not handed back; their locks expire and another worker takes them over',
        );
        await bounded(
          'the step workers (forced)',
          Promise.allSettled(workers.map((worker) => worker.disconnect())),
          endBy,
        );
      }
      await bounded('the webhooks', this.webhooks?.close(), abortAt + handBackGraceMs);
    } finally {
      clearTimeout(abortTimer);
      // The rest in parallel, each within what is left of the bound; a connection that does not quit in
      // time is dropped.
      const quitBy = Math.max(endBy, Date.now() + minimumCloseMs);
      const quitWithinMs = () => Math.max(minimumCloseMs, quitBy - Date.now());
      // Before the engine it starts runs with.
      await bounded('the queued run starter', this.queuedRuns?.close(), quitBy);
      await Promise.all([
        bounded('the retention sweeper', this.retention?.close(), quitBy),
        bounded('the engine', this.engine?.close(), quitBy),
        bounded('the MCP servers', this.mcpServers?.close(), quitBy),
        bounded(
          'the toolboxes',
          Promise.allSettled(this.builtinToolboxes.map((toolbox) => toolbox.close?.())),
          quitBy,
        ),
        bounded('the telemetry', this.telemetry?.close(), quitBy),
        bounded('the queue spans', this.queueTelemetry?.close(), quitBy),
        ...[this.subscriber, this.commands, ...this.workerConnections].map((connection) =>
          connection ? closeRedis(connection, { timeoutMs: quitWithinMs() }) : undefined,
        ),
      ]);
      logger.info('worker closed');
    }
  }
}

/** How often a worker looks for steps waiting for what it serves: a quarter of the wait, 250 ms to 1 s. */
function capabilityLookMs(waitS: number): number {
  return Math.min(1_000, Math.max(250, Math.floor((waitS * 1000) / 4)));
}

/** After the deadline: time for aborted steps to hand their jobs back, and for connections to quit. */
const handBackGraceMs = 2_000;
const shutdownGraceMs = 3_000;
/** The least time a close is given, however late: a quit that Redis answers takes milliseconds. */
const minimumCloseMs = 500;

/**
 * Waits for `work` at most `withinMs`; true when it settled in time (a failure is logged, not thrown: a
 * shutdown goes on with the next thing to close).
 */
async function settleWithin(
  work: Promise<unknown> | undefined,
  withinMs: number,
  logger: Logger,
  what: string,
): Promise<boolean> {
  if (!work) return true;
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => true,
    (error: unknown) => {
      logger.warn({ err: error }, `shutdown: closing ${what} failed`);
      return true;
    },
  );
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, withinMs));
  });
  try {
    const inTime = await Promise.race([settled, late]);
    if (!inTime) logger.warn(`shutdown: ${what} not closed in time; dropped`);
    return inTime;
  } finally {
    clearTimeout(timer);
  }
}
