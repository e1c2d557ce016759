import { Queue, Worker } from 'bullmq';
import type { RetentionConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import { closeRedis } from '../redis/connection.js';
import type { KeySpace } from '../redis/keys.js';
import { redisOutageLog } from '../redis/redis-outage.js';
import { sweepExpired } from '../redis/retention.js';

export const retentionQueueName = 'retention';
const schedulerId = 'retention-sweep';

/** The retention queue's prefix: a hash tag of its own, beside the shards'. */
export function retentionQueuePrefix(space: KeySpace): string {
  return `${space.prefix}:{retention}`;
}

/**
 * Runs retention's sweep (src/redis/retention.ts) every `sweep_interval_s`, on one worker at a time whatever
 * the number of worker processes: every worker upserts the same BullMQ job scheduler (an idempotent write)
 * and consumes its queue with concurrency 1, and the scheduler adds one job per interval. A sweep that fails
 * is logged and simply waits for the next interval. Nothing is scheduled when both windows are 0. An entry
 * a sweep cannot handle is skipped and logged, and the sweep goes on; each sweep's counts (`skipped`
 * included) are logged and kept as its job's return value.
 */
export class RetentionSweeper {
  private queue: Queue | undefined;
  private worker: Worker | undefined;

  constructor(
    private readonly options: {
      /** Commands of the sweep itself (the worker's command connection). */
      commands: RedisClient;
      /** A template BullMQ duplicates for its own connections. */
      connection: RedisClient;
      space: KeySpace;
      settings: RetentionConfig;
      logger: Logger;
      /** Frees the admission slots removed runs still hold (decision 0048); absent without fair admission. */
      releaseRemoved?: ((runIds: readonly string[]) => Promise<unknown>) | undefined;
    },
  ) {}

  get enabled(): boolean {
    const { settings } = this.options;
    return settings.finished_runs_s > 0 || settings.idle_sessions_s > 0;
  }

  async start(): Promise<void> {
    const { connection, space, settings, logger, commands } = this.options;
    const prefix = retentionQueuePrefix(space);
    const outage = redisOutageLog(logger);
    this.queue = new Queue(retentionQueueName, { connection, prefix });
    // Without a listener BullMQ prints each of its errors with console.error, a stack trace each.
    this.queue.on('error', (error) => {
      if (!outage.absorb(error)) logger.warn({ err: error }, 'retention queue error');
    });
    if (!this.enabled) {
      // Switched off: a scheduler left by an earlier config must not go on sweeping.
      await this.queue.removeJobScheduler(schedulerId);
      return;
    }
    await this.queue.upsertJobScheduler(
      schedulerId,
      { every: settings.sweep_interval_s * 1000 },
      { name: 'sweep', opts: { removeOnComplete: 10, removeOnFail: 10 } },
    );
    this.worker = new Worker(
      retentionQueueName,
      async () => {
        const result = await sweepExpired(
          commands,
          space,
          settings,
          logger,
          undefined,
          this.options.releaseRemoved,
        );
        return result;
      },
      { connection, prefix, concurrency: 1 },
    );
    this.worker.on('error', (error) => {
      if (!outage.absorb(error)) logger.warn({ err: error }, 'retention worker error');
    });
    this.worker.on('failed', (_job, error) => logger.warn({ err: error }, 'retention sweep failed'));
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue?.close();
    await closeRedis(this.options.connection);
  }
}
