import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import type { KeySpace } from '../redis/keys.js';
import { type WorkerAbout, WorkerRegistry } from '../redis/worker-registry.js';

/**
 * Takes over a dead worker process's steps within about `deadAfterMs`, without waiting for their job locks
 * to expire (`worker.lock_duration_ms`, 10 s by default): every process beats a heartbeat that expires after
 * `deadAfterMs`, and looks every quarter of it for registered processes whose heartbeat is gone. Such a
 * process is dead: the locks it still holds are released (only while they hold its token) and BullMQ's
 * stalled check runs at once, so its steps go back to the queue and a live worker takes them. A SIGKILLed
 * process's steps are back in the queue between 0.75 and 1.25 × `deadAfterMs` after it died.
 *
 * A live process is never taken for dead while its event loop turns at least every `deadAfterMs` (steps
 * never block it: tools run their work off the loop). Should it happen all the same (a frozen VM), fencing
 * keeps its late writes out (every commit checks the lock token), so a step is repeated, never corrupted.
 * After its own connection to Redis comes back, a process waits `deadAfterMs` before judging others: their
 * heartbeats may have expired while Redis was away.
 */
export class DeadWorkerWatch {
  private readonly registry: WorkerRegistry;
  private timer: NodeJS.Timeout | undefined;
  private readyAt = Date.now();
  private busy = false;

  constructor(
    private readonly options: {
      redis: RedisClient;
      space: KeySpace;
      /** This process's BullMQ workers, one per shard it consumes. */
      workers: readonly { shard: number; worker: Worker }[];
      /** This process's id in the registry (random when not given). */
      id?: string;
      /** What GET /v1/system shows of the process. */
      about?: WorkerAbout;
      deadAfterMs: number;
      logger: Logger;
      /** Told how many dead processes this one found and released the steps of (for metrics). */
      onDeadWorkers?: (count: number) => void;
    },
  ) {
    this.registry = new WorkerRegistry(
      options.redis,
      options.space,
      options.id ?? randomUUID(),
      options.deadAfterMs,
    );
    options.redis.on('ready', () => {
      this.readyAt = Date.now();
    });
  }

  async start(): Promise<void> {
    await this.registry.register(
      this.options.workers.map(({ worker }) => worker.id),
      this.options.about,
    );
    const every = Math.max(100, Math.floor(this.options.deadAfterMs / 4));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.registry.unregister().catch(() => {});
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      if (await this.registry.beat()) {
        this.options.logger.warn(
          { worker_id: this.registry.id },
          'this worker was taken for dead (its heartbeat lapsed) and its registry entry removed: registered again',
        );
      }
      if (Date.now() - this.readyAt < this.options.deadAfterMs) return;
      const dead = await this.registry.deadWorkers();
      if (dead.length > 0) await this.takeOver(dead);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'dead worker watch: RedisClient call failed; trying again');
    } finally {
      this.busy = false;
    }
  }

  private async takeOver(dead: Awaited<ReturnType<WorkerRegistry['deadWorkers']>>): Promise<void> {
    const { workers, logger } = this.options;
    // Every shard, not only this process's: a dead process may have consumed shards this one does not.
    for (let shard = 0; shard < this.options.space.shards; shard += 1) {
      const released = await this.registry.releaseLocks(shard, dead);
      if (released.length === 0) continue;
      // BullMQ's stalled check, now rather than at its next interval: it moves the released jobs to wait. A
      // shard this process does not consume is left to its own workers' next check.
      const worker = workers.find((entry) => entry.shard === shard)?.worker;
      await (
        worker as unknown as { moveStalledJobsToWait(): Promise<void> } | undefined
      )?.moveStalledJobsToWait();
      logger.warn(
        { dead_workers: dead.map((entry) => entry.id), shard, jobs: released },
        'a worker process died: its steps were released and go back to the queue',
      );
    }
    for (const entry of dead) await this.registry.forget(entry.id);
    this.options.onDeadWorkers?.(dead.length);
  }
}
