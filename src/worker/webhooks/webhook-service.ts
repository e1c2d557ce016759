import { Queue, Worker } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { type RatchetConfig, webhookIdOf } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import { closeRedis, createRedis, type RedisClient, redisTargetOf } from '../../redis/connection.js';
import { type KeySpace, webhookOutboxKey, webhookQueueName, webhookQueuePrefix } from '../../redis/keys.js';
import { redisOutageLog } from '../../redis/redis-outage.js';
import { enqueueDelivery, webhookMessageId } from '../../redis/webhook-deliveries.js';
import {
  ackWebhookOutbox,
  openWebhookOutbox,
  readEventAt,
  readWebhookOutbox,
} from '../../redis/webhook-outbox.js';
import { systemResolver } from '../../tools/index.js';
import { crashPoint } from '../../workflows/index.js';
import { type ConfiguredWebhook, deliverWebhook } from './deliver-webhook.js';
import { deliveryAttempts, retryDelayMs, webhookPayload, webhookTypeOf } from './webhook-message.js';

export interface WebhookServiceOptions {
  config: RatchetConfig;
  space: KeySpace;
  /** The shards whose outboxes this worker reads. */
  shards: readonly number[];
  commands: RedisClient;
  logger: Logger;
  /** This worker's id: its name as a consumer of the outboxes. */
  consumer: string;
}

/** The first retry's delay of a delivery, as enqueued (`backoff.delay`: its webhook's retry_base_ms). */
function retryBaseOf(job: { opts: { backoff?: number | { delay?: number } } } | undefined): number {
  const backoff = job?.opts.backoff;
  return typeof backoff === 'object' && backoff.delay !== undefined ? backoff.delay : 5_000;
}

/** Entries read from an outbox at once. */
const outboxBatch = 100;
/** An outbox entry read by a consumer that died before acknowledging it is taken over after this. */
const outboxStaleMs = 10_000;
const outboxBlockMs = 1_000;
/** Concurrent deliveries per worker process (each waits on a receiver, not on the CPU). */
const deliveryConcurrency = 20;

/**
 * A worker's webhooks (decision 0034): the dispatcher, which turns the shards' outbox entries into delivery
 * jobs (one per webhook and event, idempotent by job id) and then acknowledges them, and the BullMQ worker
 * that delivers them with retries. Started only when the config has webhooks.
 */
export class WebhookService {
  private readonly webhooks = new Map<string, ConfiguredWebhook>();
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private reader: RedisClient | undefined;
  private workerConnection: RedisClient | undefined;
  /** The queue's own connection: BullMQ's scripts defined on the commands connection would slow its batches. */
  private queueConnection: RedisClient | undefined;
  private dispatching: Promise<void> | undefined;
  private closing = false;

  constructor(private readonly options: WebhookServiceOptions) {
    options.config.webhooks.forEach((config, index) => {
      const id = webhookIdOf(config, index);
      this.webhooks.set(id, { id, index, config, signer: new Webhook(config.secret) });
    });
  }

  async start(): Promise<void> {
    const { config, space, logger, commands } = this.options;
    const target = redisTargetOf(config.redis);
    this.queueConnection = createRedis({ ...target, logger, name: 'ratchet-webhook-queue' });
    this.queue = new Queue(webhookQueueName, {
      connection: this.queueConnection,
      prefix: webhookQueuePrefix(space),
    });
    // Its connections fail on every retry while Redis is away: one outage, told once (as the step workers').
    const outage = redisOutageLog(logger);
    this.queue.on('error', (error) => {
      if (!outage.absorb(error)) logger.warn({ err: error }, 'webhook queue error');
    });
    for (const shard of this.options.shards)
      await openWebhookOutbox(commands, webhookOutboxKey(space, shard));
    this.workerConnection = createRedis({ ...target, logger, name: 'ratchet-webhooks', lazy: true });
    const byWebhook = this.webhooks;
    this.worker = new Worker(
      webhookQueueName,
      async (job, _token, signal) =>
        deliverWebhook(job, signal ?? new AbortController().signal, {
          webhooks: byWebhook,
          commands,
          space,
          resolve: systemResolver,
        }),
      {
        connection: this.workerConnection,
        prefix: webhookQueuePrefix(space),
        concurrency: deliveryConcurrency,
        lockDuration: config.worker.lock_duration_ms,
        stalledInterval: config.worker.stalled_interval_ms,
        // A crash is not the delivery's fault: a stalled delivery is taken over, not failed.
        maxStalledCount: config.worker.max_stalled_count + 100,
        settings: {
          backoffStrategy: (attemptsMade, _type, _error, job) => retryDelayMs(retryBaseOf(job), attemptsMade),
        },
      },
    );
    this.worker.on('error', (error) => {
      if (!outage.absorb(error)) logger.warn({ err: error }, 'webhook worker error');
    });
    this.worker.on('failed', (job, error) => {
      const final =
        !job || job.attemptsMade >= (job.opts.attempts ?? 1) || error.name === 'UnrecoverableError';
      logger.warn(
        { err: error, delivery: job?.id, final },
        final ? 'webhook delivery failed for good' : 'webhook delivery failed: retrying',
      );
    });
    this.reader = createRedis({ ...target, logger, name: 'ratchet-webhook-outbox', batching: 'none' });
    this.dispatching = this.dispatchLoop(this.reader);
    logger.info({ webhooks: [...this.webhooks.keys()] }, 'webhooks started');
  }

  private async dispatchLoop(reader: RedisClient): Promise<void> {
    const { space, shards, logger } = this.options;
    const blockMs = Math.max(50, Math.floor(outboxBlockMs / shards.length));
    while (!this.closing) {
      for (const shard of shards) {
        if (this.closing) return;
        try {
          await this.dispatchShard(reader, webhookOutboxKey(space, shard), blockMs);
        } catch (error) {
          if (this.closing) return;
          if (!redisOutageLog(logger).absorb(error)) {
            logger.warn({ err: error, shard }, 'webhook outbox: dispatch failed; trying again');
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    }
  }

  /** Enqueues the deliveries of one batch of outbox entries, then acknowledges them. */
  private async dispatchShard(reader: RedisClient, outboxKey: string, blockMs: number): Promise<void> {
    const { commands, space, consumer } = this.options;
    const queue = this.queue;
    if (!queue) return;
    const entries = await readWebhookOutbox(reader, outboxKey, {
      consumer,
      count: outboxBatch,
      blockMs,
      staleAfterMs: outboxStaleMs,
    });
    if (entries.length > 0) crashPoint('webhook.before_enqueue');
    for (const entry of entries) {
      const sessionId = /:session:([^:]+):events$/.exec(entry.eventsKey)?.[1];
      const event = sessionId
        ? await readEventAt(commands, entry.eventsKey, entry.eventId, sessionId)
        : undefined;
      const type = event ? webhookTypeOf(event) : undefined;
      if (!sessionId || !event || !type) continue;
      const body = webhookPayload(type, event, sessionId);
      for (const webhook of this.webhooks.values()) {
        if (!webhook.config.events.includes(type)) continue;
        await enqueueDelivery(
          queue,
          commands,
          space,
          {
            v: 1,
            webhook: webhook.id,
            session_id: sessionId,
            event_id: entry.eventId,
            run_id: event.run_id,
            type,
            message_id: webhookMessageId(sessionId, entry.eventId),
          },
          body,
          { attempts: deliveryAttempts(webhook.config.retry_base_ms), baseMs: webhook.config.retry_base_ms },
          Date.now(),
        );
      }
    }
    if (entries.length > 0) crashPoint('webhook.after_enqueue');
    await ackWebhookOutbox(
      commands,
      outboxKey,
      entries.map((entry) => entry.entryId),
    );
  }

  /** Stops dispatching and delivering (an attempt under way is finished, or handed back at the deadline). */
  async close(): Promise<void> {
    this.closing = true;
    // Dropping the reader ends a blocking read at once.
    this.reader?.disconnect();
    await this.dispatching?.catch(() => undefined);
    await this.worker?.close();
    await this.queue?.close();
    for (const connection of [this.workerConnection, this.queueConnection]) {
      if (connection) await closeRedis(connection, { timeoutMs: 1_000 });
    }
  }
}
