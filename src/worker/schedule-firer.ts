import { DelayedError, type Job, Worker } from 'bullmq';
import type { Engine } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import { type KeySpace, scheduleQueueName, schedulesPrefix } from '../redis/keys.js';
import { redisOutageLog } from '../redis/redis-outage.js';
import { type FireJobData, fireTimeOf } from '../redis/schedule-store.js';

export interface ScheduleFirerOptions {
  engine: Engine;
  space: KeySpace;
  /** A template connection BullMQ duplicates (it never connects itself). */
  connection: RedisClient;
  logger: Logger;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
}

/** Fires taken up at once by one worker process: each is a few Redis round trips. */
const fireConcurrency = 4;
/** How often a fire waiting for the previous run (`overlap: queue`) looks again, parked meanwhile. */
export const queuedFireRecheckMs = 2_000;

/**
 * A worker process's taker of schedule fires (decision 0036): one BullMQ worker on the `schedules` queue,
 * whose job schedulers add one job per fire time. A fire's job may be taken up twice (a worker killed while
 * holding it); the engine's fire decides once and starts at most one run. A fire that waits for the previous
 * run is parked in the delayed set, holding no worker.
 */
export class ScheduleFirer {
  private worker: Worker<FireJobData> | undefined;

  constructor(private readonly options: ScheduleFirerOptions) {}

  async start(): Promise<void> {
    const { options } = this;
    const worker = new Worker<FireJobData>(scheduleQueueName, (job, token) => this.process(job, token), {
      connection: options.connection,
      prefix: schedulesPrefix(options.space),
      concurrency: fireConcurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // A crash is not the fire's fault: a fire taken over many times is still taken up.
      maxStalledCount: options.maxStalledCount,
      autorun: false,
    });
    // Redis going away is told once for the whole process (redis-outage.ts), not by each blocking client.
    const outage = redisOutageLog(options.logger);
    worker.on('error', (error) => {
      if (!outage.absorb(error)) options.logger.warn({ err: error }, 'schedule worker error');
    });
    worker.on('failed', (job, error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1))
        options.logger.error({ err: error, job_id: job.id }, 'schedule fire failed for good');
    });
    this.worker = worker;
    worker.run().catch((error: unknown) => options.logger.error({ err: error }, 'schedule worker stopped'));
    await worker.waitUntilReady();
  }

  private async process(job: Job<FireJobData>, token: string | undefined): Promise<string> {
    const fireAtMs = fireTimeOf(job.id);
    if (fireAtMs === undefined || job.data?.v !== 1 || typeof job.data.schedule !== 'string') {
      this.options.logger.error({ job_id: job.id }, 'not a schedule fire job: left alone');
      return 'ignored';
    }
    const outcome = await this.options.engine.schedules().fire(job.data.schedule, fireAtMs);
    const fireAt = new Date(fireAtMs).toISOString();
    if (outcome.kind === 'waiting') {
      await job.moveToDelayed(Date.now() + queuedFireRecheckMs, token);
      throw new DelayedError();
    }
    if (outcome.kind === 'started')
      this.options.logger.info(
        { schedule: job.data.schedule, fire_at: fireAt, run_id: outcome.runId },
        'schedule fired',
      );
    else
      this.options.logger.info(
        { schedule: job.data.schedule, fire_at: fireAt, outcome: outcome.kind, ...outcome },
        'schedule fire started no run',
      );
    return outcome.kind;
  }

  async close(): Promise<void> {
    await this.worker?.close();
  }
}
