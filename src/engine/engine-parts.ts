import type { Logger } from '../log/index.js';
import { BusyMessageWriter } from '../redis/busy-messages.js';
import { closeRedis, type RedisClient } from '../redis/connection.js';
import { ContinuationStore } from '../redis/continuation-store.js';
import type { EngineContext } from '../redis/engine-context.js';
import { EngineStore, openQueueConnection } from '../redis/engine-store.js';
import { EventHub } from '../redis/event-hub.js';
import { type KeySpace, shardOf } from '../redis/keys.js';
import { QueueScheduler } from '../redis/queue-scheduler.js';
import { RedisRunAdmission } from '../redis/run-admission.js';
import { RunWriter } from '../redis/run-writer.js';
import { StepQueues } from '../redis/step-queues.js';
import { WebhookDeliveryStore } from '../redis/webhook-deliveries.js';
import {
  type QuestionRecord,
  type RunRecord,
  type StepScheduler,
  sessionIdOfRun,
  stepJobId,
} from '../workflows/index.js';
import type { EngineOptions } from './engine-options.js';

/**
 * What the engine's operations (runs, sessions, inspection, questions) share: its options and clock, and the
 * Redis stores it composes, with the connections, queues and event hub they run on. Built once per engine and
 * closed with it; the operations hold the rules, the stores every Redis command.
 */
export class EngineParts {
  readonly now: () => Date;
  readonly redis: RedisClient;
  readonly space: KeySpace;
  /** The client face's reads and writes that name keys. */
  readonly store: EngineStore;
  readonly queues: StepQueues;
  /** What cancellations and sessions (src/redis) are given: connections, queues, clock and listeners. */
  readonly context: EngineContext;
  /**
   * Told of each run a cancellation through this engine finished (its children too) and of each question it
   * closed (answered, or cancelled with its run), once (telemetry, decision 0024).
   */
  readonly runCancelled = new Set<(record: RunRecord) => void>();
  readonly questionClosed = new Set<(question: QuestionRecord, at: string) => void>();
  /** The questions pending from before the index of their ages are entered in it (oldestPendingQuestions). */
  pendingQuestionsIndexed: Promise<void> | undefined;

  /** The queues' own connection (openQueueConnection), so the steps' pipelines stay cheap. */
  private readonly queueConnection: RedisClient;
  /** Wakes every event follower of this process from a few blocking connections (opened on first use). */
  readonly eventHub: EventHub;
  /** Writes new runs with their first steps, on a connection of its own (it WATCHes). */
  readonly runWriter: RunWriter;
  /** Fair admission of root runs (decision 0038); absent when the config limits nothing. */
  readonly admission: RedisRunAdmission | undefined;
  /**
   * Reads and writes of retries and forks (decision 0022), on a connection of their own (they WATCH), opened
   * on the first retry or fork: most engines (a worker's) never make one.
   */
  private continuationStore: ContinuationStore | undefined;
  /** The webhook deliveries (decision 0034), opened on the first read: most engines never list them. */
  private webhookDeliveryStore: WebhookDeliveryStore | undefined;
  /** Starts of queued runs and interruptions (decision 0032), on connections of their own, opened on first use. */
  private busyMessageWriter: BusyMessageWriter | undefined;

  constructor(readonly options: EngineOptions) {
    this.now = options.now ?? (() => new Date());
    this.redis = options.redis;
    this.space = options.space;
    this.store = new EngineStore({
      redis: options.redis,
      space: options.space,
      eventsMaxLength: options.eventsMaxLength,
      logger: options.logger,
    });
    this.queueConnection = openQueueConnection(options.redis);
    this.queues = new StepQueues(
      this.queueConnection,
      options.space,
      options.jobs,
      options.logger,
      options.queueTelemetry,
    );
    this.runWriter = new RunWriter({
      redis: options.redis,
      space: options.space,
      queues: this.queues,
      eventsMaxLength: options.eventsMaxLength,
    });
    const policy = options.admission;
    this.admission = policy
      ? new RedisRunAdmission({
          redis: options.redis,
          space: options.space,
          policy,
          // A run's first step is always its iteration 1 job (a team's first turn too).
          wake: async (runId) => {
            const sessionId = sessionIdOfRun(runId);
            if (sessionId)
              await this.queues.wakeAdmitted(
                shardOf(options.space, sessionId),
                stepJobId.iteration(runId, 1),
              );
          },
        })
      : undefined;
    this.eventHub = new EventHub({
      redis: options.redis,
      maxFollowers: options.maxFollowers ?? 1000,
      logger: options.logger,
    });
    this.context = {
      redis: options.redis,
      space: options.space,
      queues: this.queues,
      eventsMaxLength: options.eventsMaxLength,
      logger: options.logger,
      now: this.now,
      runCancelled: (record) => notify(options.logger, this.runCancelled, (listener) => listener(record)),
      questionClosed: (question, at) =>
        notify(options.logger, this.questionClosed, (listener) => listener(question, at)),
    };
  }

  /** The scheduler port of the steps a worker runs, with the engine's cancellation. */
  scheduler(cancel: (runId: string, reason: string) => Promise<unknown>): StepScheduler {
    return new QueueScheduler(this.queues, this.runWriter, this.space, cancel);
  }

  continuations(): ContinuationStore {
    this.continuationStore ??= new ContinuationStore({
      redis: this.redis,
      space: this.space,
      queues: this.queues,
      eventsMaxLength: this.options.eventsMaxLength,
    });
    return this.continuationStore;
  }

  webhookDeliveries(): WebhookDeliveryStore {
    this.webhookDeliveryStore ??= new WebhookDeliveryStore({
      commands: this.redis,
      queueConnection: this.queueConnection,
      space: this.space,
    });
    return this.webhookDeliveryStore;
  }

  busyMessages(): BusyMessageWriter {
    this.busyMessageWriter ??= new BusyMessageWriter({
      redis: this.redis,
      space: this.space,
      queues: this.queues,
      eventsMaxLength: this.options.eventsMaxLength,
    });
    return this.busyMessageWriter;
  }

  async close(): Promise<void> {
    try {
      await this.webhookDeliveryStore?.close();
      await this.continuationStore?.close();
      await this.busyMessageWriter?.close();
    } finally {
      try {
        await this.eventHub.close();
        await this.runWriter.close();
        await this.queues.close();
      } finally {
        await closeRedis(this.queueConnection);
      }
    }
  }
}

/** Calls each listener; one that throws is logged, never fails the cancellation or answer already written. */
export function notify<Listener>(
  logger: Logger,
  listeners: ReadonlySet<Listener>,
  call: (listener: Listener) => void,
): void {
  for (const listener of listeners) {
    try {
      call(listener);
    } catch (error) {
      logger.warn({ err: error }, 'a telemetry listener failed');
    }
  }
}
