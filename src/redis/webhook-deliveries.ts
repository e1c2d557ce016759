import { Job, type JobsOptions, Queue } from 'bullmq';
import { z } from 'zod';
import { parseRecord } from '../schemas/parse.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import type { RedisClient } from './connection.js';
import {
  type KeySpace,
  webhookBodyKey,
  webhookDeliveryIndexKey,
  webhookQueueName,
  webhookQueuePrefix,
} from './keys.js';

/** The job data of one delivery: references only (the event is read from its session's stream). Version 1. */
export const deliveryJobDataSchema = z.strictObject({
  v: z.literal(1),
  /** The webhook's id in the config. */
  webhook: z.string(),
  session_id: z.string(),
  /** The event's stream id in its session. */
  event_id: z.string(),
  run_id: z.string(),
  /** The webhook event type (run_completed, approval_requested …). */
  type: z.string(),
  /** The `webhook-id` header: the same for every attempt, and every webhook, of this event. */
  message_id: z.string(),
});

export type DeliveryJobData = z.infer<typeof deliveryJobDataSchema>;

defineRecordKind({ name: 'webhook.delivery-job', version: 1, schema: deliveryJobDataSchema });

/** Completed and failed deliveries are kept this long (and listed), then removed by BullMQ. */
export const keepDeliveriesS = 7 * 86_400;

/** The job name of a delivery in the webhook queue. */
const deliveryJobName = 'deliver';

/**
 * One delivery per webhook and event: its job id derives from the webhook and the event's stream id, so
 * enqueuing it again (a dispatcher that died before acknowledging the outbox) is a no-op.
 */
export function deliveryJobId(webhook: string, sessionId: string, eventId: string): string {
  return `${webhook}.${sessionId}.${eventId}`;
}

/** The `webhook-id` of an event: one per event, whoever receives it and however often it is retried. */
export function webhookMessageId(sessionId: string, eventId: string): string {
  return `msg_${sessionId}_${eventId}`;
}

export interface DeliveryRetry {
  /** How many attempts in all (the first included). */
  attempts: number;
  /** The first retry's delay, doubled for each further one (webhook-message.ts computes them). */
  baseMs: number;
}

/** A delivery's body is kept this long: its retries (at least a day) and its listing (keepDeliveriesS). */
const keepBodyS = keepDeliveriesS + 2 * 86_400;

/**
 * Stores the body of an event's deliveries (the first one written stays: every attempt sends the same
 * bytes), enqueues a delivery (idempotent by its job id) and lists it. Each step may be repeated: the add of
 * an existing id is ignored and the index keeps the first enqueue time.
 */
export async function enqueueDelivery(
  queue: Queue,
  commands: RedisClient,
  space: KeySpace,
  data: DeliveryJobData,
  body: string,
  retry: DeliveryRetry,
  now: number,
): Promise<string> {
  await commands.set(webhookBodyKey(space, data.message_id), body, 'EX', keepBodyS, 'NX');
  const jobId = deliveryJobId(data.webhook, data.session_id, data.event_id);
  const options: JobsOptions = {
    jobId,
    attempts: retry.attempts,
    backoff: { type: 'webhook', delay: retry.baseMs },
    removeOnComplete: { age: keepDeliveriesS },
    removeOnFail: { age: keepDeliveriesS },
  };
  await queue.add(deliveryJobName, data, options);
  const index = webhookDeliveryIndexKey(space);
  await commands
    .multi()
    .zadd(index, 'NX', now, jobId)
    .zremrangebyscore(index, '-inf', now - keepDeliveriesS * 1000)
    .exec();
  return jobId;
}

export type DeliveryStatus = 'pending' | 'retrying' | 'delivering' | 'delivered' | 'failed';

/** A delivery as the API lists it. */
export interface DeliveryView {
  id: string;
  webhook: string;
  type: string;
  message_id: string;
  session_id: string;
  run_id: string;
  event_id: string;
  status: DeliveryStatus;
  /** Attempts made (finished ones: delivered, or failed). */
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  /** When the next attempt is due (a delivery waiting to be retried). */
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** The deliveries, newest first, `limit` of them after the place `before` (`<ms>:<job id>`) if given. */
export async function listDeliveries(
  queue: Queue,
  commands: RedisClient,
  space: KeySpace,
  options: { limit: number; before?: string },
): Promise<{ deliveries: DeliveryView[]; next: string | null }> {
  const index = webhookDeliveryIndexKey(space);
  const [beforeMs, beforeId] = splitPlace(options.before);
  // Ties on the same millisecond come in descending id order; those at or after the cursor's id were listed.
  const window = options.limit + tieAllowance;
  const rows = await commands.zrevrangebyscore(
    index,
    beforeMs === undefined ? '+inf' : beforeMs,
    '-inf',
    'WITHSCORES',
    'LIMIT',
    0,
    window,
  );
  const places: { id: string; at: number }[] = [];
  for (let position = 0; position < rows.length; position += 2) {
    const id = rows[position] as string;
    const at = Number(rows[position + 1]);
    if (beforeMs !== undefined && at === beforeMs && beforeId !== undefined && id >= beforeId) continue;
    places.push({ id, at });
    if (places.length === options.limit) break;
  }
  const read = await Promise.all(places.map((place) => readDelivery(queue, commands, place.id, place.at)));
  const views = read.filter((view) => view !== undefined);
  const last = places.at(-1);
  const more = places.length === options.limit && rows.length / 2 > places.length;
  return { deliveries: views, next: more && last ? `${String(last.at).padStart(13, '0')}:${last.id}` : null };
}

/** Rows of one millisecond beyond a page that a cursor may have to skip. */
const tieAllowance = 50;

function splitPlace(place: string | undefined): [number | undefined, string | undefined] {
  if (place === undefined) return [undefined, undefined];
  const colon = place.indexOf(':');
  return [Number(place.slice(0, colon)), place.slice(colon + 1)];
}

/** One delivery, or undefined when it is unknown (or removed after keepDeliveriesS). */
export async function readDelivery(
  queue: Queue,
  commands: RedisClient,
  id: string,
  listedAt?: number,
): Promise<DeliveryView | undefined> {
  const job = await Job.fromId(queue, id);
  if (!job?.id) return undefined;
  const data = parseRecord(deliveryJobDataSchema, job.data, `data of webhook delivery ${id}`);
  const state = await job.getState();
  const status = statusOf(state);
  let nextAttemptAt: string | null = null;
  if (status === 'retrying') {
    // BullMQ scores a delayed job by its due time (ms) shifted left by 12 bits.
    const score = await commands.zscore(queue.toKey('delayed'), id);
    if (score !== null) nextAttemptAt = new Date(Math.floor(Number(score) / 0x1000)).toISOString();
  }
  return {
    id: job.id,
    webhook: data.webhook,
    type: data.type,
    message_id: data.message_id,
    session_id: data.session_id,
    run_id: data.run_id,
    event_id: data.event_id,
    status,
    attempts: job.attemptsMade,
    max_attempts: job.opts.attempts ?? 1,
    last_error: job.failedReason ? job.failedReason : null,
    next_attempt_at: nextAttemptAt,
    created_at: new Date(listedAt ?? job.timestamp).toISOString(),
    delivered_at: status === 'delivered' && job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
  };
}

function statusOf(state: string): DeliveryStatus {
  switch (state) {
    case 'completed':
      return 'delivered';
    case 'failed':
      return 'failed';
    case 'active':
      return 'delivering';
    case 'delayed':
      return 'retrying';
    default:
      return 'pending';
  }
}

/**
 * Sends a delivery again now, with the same `webhook-id`: a delivered or failed one starts over with its
 * attempts reset, one waiting for its retry is due at once. 'delivering' when an attempt is under way
 * (nothing changed); undefined when the delivery is unknown.
 */
export async function redeliver(
  queue: Queue,
  commands: RedisClient,
  id: string,
): Promise<DeliveryView | 'delivering' | undefined> {
  const job = await Job.fromId(queue, id);
  if (!job) return undefined;
  const state = await job.getState();
  if (state === 'active') return 'delivering';
  if (state === 'completed' || state === 'failed') {
    await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
  } else if (state === 'delayed') {
    await job.promote();
  }
  return readDelivery(queue, commands, id);
}

/**
 * The deliveries as the client face reads them (GET /v1/webhooks/deliveries, redeliver), on a queue
 * handle opened on first use: most engines never list deliveries.
 */
export class WebhookDeliveryStore {
  private queue: Queue | undefined;

  constructor(
    private readonly options: { commands: RedisClient; queueConnection: RedisClient; space: KeySpace },
  ) {}

  private deliveries(): Queue {
    this.queue ??= new Queue(webhookQueueName, {
      connection: this.options.queueConnection,
      prefix: webhookQueuePrefix(this.options.space),
    });
    return this.queue;
  }

  list(options: {
    limit: number;
    before?: string;
  }): Promise<{ deliveries: DeliveryView[]; next: string | null }> {
    return listDeliveries(this.deliveries(), this.options.commands, this.options.space, options);
  }

  read(id: string): Promise<DeliveryView | undefined> {
    return readDelivery(this.deliveries(), this.options.commands, id);
  }

  redeliver(id: string): Promise<DeliveryView | 'delivering' | undefined> {
    return redeliver(this.deliveries(), this.options.commands, id);
  }

  async close(): Promise<void> {
    await this.queue?.close();
  }
}
