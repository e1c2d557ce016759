import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import type { KeySpace } from '../redis/keys.js';
import { type RegisteredProcess, type WorkerAbout, WorkerRegistry } from '../redis/worker-registry.js';

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
 *
 * Sooner than the heartbeat (decision 0045): each process names its own connection (`connectionName`), and
 * every `goneAfterMs / 6` looks at the names Redis lists (CLIENT LIST, in the round trip that reads the
 * registry). A SIGKILLed process's connections close at once; a registered process whose name has been
 * missing for `goneAfterMs` — longer than its connection takes to come back after a cut — is dead. A process
 * cut off without its connection closing (a partition, a paused network) keeps its name listed, and its
 * heartbeat judges it as before.
 */
export class DeadWorkerWatch {
  private readonly registry: WorkerRegistry;
  private timer: NodeJS.Timeout | undefined;
  /** Set for when the first missing name's `goneAfterMs` runs out (rather than the tick after it). */
  private judgeTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readyAt = Date.now();
  private busy = false;
  private lastBeatAt = 0;
  /** Processes whose connection name this one saw listed since its own connection last came back. */
  private readonly seenConnected = new Set<string>();
  /** When each registered process's connection name was first seen missing (cleared when seen again). */
  private readonly missingSince = new Map<string, number>();
  /** CLIENT LIST was refused (a managed Redis may forbid it): heartbeats alone judge from then on. */
  private listingRefused = false;

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
      /**
       * The name this process's connection (`redis`) carries, and how long another process's name may be
       * missing from CLIENT LIST before it is dead (decision 0045). Without it, only heartbeats judge.
       */
      connections?: { name: string; goneAfterMs: number };
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
      options.connections?.name,
    );
    options.redis.on('ready', () => {
      this.readyAt = Date.now();
      this.seenConnected.clear();
      this.missingSince.clear();
    });
  }

  async start(): Promise<void> {
    await this.registry.register(
      this.options.workers.map(({ worker }) => worker.id),
      this.options.about,
    );
    this.lastBeatAt = Date.now();
    // A first look: the processes listed now are seen, so one that dies from now on is judged by its name.
    await this.findDead(false).catch(() => []);
    this.timer = setInterval(() => void this.tick(), this.tickMs());
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.judgeTimer) clearTimeout(this.judgeTimer);
    this.judgeTimer = undefined;
    await this.registry.unregister().catch(() => {});
  }

  private beatMs(): number {
    return Math.max(100, Math.floor(this.options.deadAfterMs / 4));
  }

  private tickMs(): number {
    const goneAfterMs = this.options.connections?.goneAfterMs;
    return goneAfterMs === undefined
      ? this.beatMs()
      : Math.min(this.beatMs(), Math.max(25, Math.floor(goneAfterMs / 6)));
  }

  private tick(): Promise<void> {
    return this.look(true);
  }

  /**
   * One look: the heartbeat when `withBeat` and it is due, then the registry and the connections, then the
   * takeover of any process found dead. After a look that succeeded, a name seen missing is judged again the
   * moment its `goneAfterMs` has passed (`scheduleJudgment`) rather than at the first tick after it.
   */
  private async look(withBeat: boolean): Promise<void> {
    // A judgment that falls while a tick looks is scheduled again when that tick is done.
    if (this.busy) return;
    this.busy = true;
    let looked = false;
    try {
      const now = Date.now();
      const beating = withBeat && now - this.lastBeatAt >= this.beatMs() - this.tickMs() / 2;
      if (beating) {
        // Info, not warn: a Redis that restarted without persistence lost every entry, and each process
        // registering again then is expected (the outage already had its own line).
        if (await this.registry.beat()) {
          this.options.logger.info(
            { worker_id: this.registry.id },
            'this worker was taken for dead (its heartbeat lapsed) or Redis lost its registry entry: registered again',
          );
        }
        this.lastBeatAt = now;
      }
      // Heartbeats that expired while this process's own connection was away say nothing.
      const judgeHeartbeats = beating && now - this.readyAt >= this.options.deadAfterMs;
      const dead = await this.findDead(judgeHeartbeats);
      if (dead.length > 0) await this.takeOver(dead);
      looked = true;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'dead worker watch: RedisClient call failed; trying again');
    } finally {
      this.busy = false;
    }
    // After a failure the ticks alone try again: a judgment at once would spin while Redis is away.
    if (looked) this.scheduleJudgment();
  }

  /**
   * Sets a timer for when the earliest missing name's `goneAfterMs` runs out. The look then reads CLIENT LIST
   * afresh, so a process whose connection came back meanwhile is not taken; heartbeats are left to the ticks.
   */
  private scheduleJudgment(): void {
    const goneAfterMs = this.options.connections?.goneAfterMs;
    if (this.closed || this.judgeTimer || goneAfterMs === undefined || this.missingSince.size === 0) return;
    const firstMissing = Math.min(...this.missingSince.values());
    this.judgeTimer = setTimeout(
      () => {
        this.judgeTimer = undefined;
        void this.look(false);
      },
      Math.max(0, firstMissing + goneAfterMs - Date.now()),
    );
    this.judgeTimer.unref();
  }

  /**
   * Registered processes whose connection name, once seen, has been missing for `goneAfterMs`, and (when
   * `judgeHeartbeats`) those whose heartbeat expired.
   */
  private async findDead(judgeHeartbeats: boolean): Promise<RegisteredProcess[]> {
    const listing = this.options.connections !== undefined && !this.listingRefused;
    const { processes, connectionNames, refused } = await this.registry.processes(listing);
    if (refused) {
      this.listingRefused = true;
      this.options.logger.warn(
        { err: refused },
        'dead worker watch: Redis refuses CLIENT LIST; dead workers are noticed by their heartbeat alone',
      );
    }
    const gone = connectionNames ? this.connectionsGone(processes, connectionNames) : new Set<string>();
    const expired = new Set(
      (await this.registry.withoutHeartbeat(judgeHeartbeats ? processes : [])).map(({ id }) => id),
    );
    const dead = processes.filter((process) => gone.has(process.id) || expired.has(process.id));
    for (const process of dead) {
      this.options.logger.warn(
        { dead_worker: process.id, noticed_by: expired.has(process.id) ? 'heartbeat' : 'connection' },
        expired.has(process.id)
          ? 'a worker process stopped beating its heartbeat: taken for dead'
          : 'a worker process has no connection to Redis left: taken for dead',
      );
    }
    return dead;
  }

  /**
   * The processes whose connection name has been missing for `goneAfterMs` after this process saw it listed
   * (since its own connection last came back: after a Redis restart every process is reconnecting, and one
   * that never came back is left to its heartbeat).
   */
  private connectionsGone(processes: readonly RegisteredProcess[], listed: Set<string>): Set<string> {
    const goneAfterMs = this.options.connections?.goneAfterMs ?? Number.POSITIVE_INFINITY;
    const now = Date.now();
    const gone = new Set<string>();
    for (const { id, connectionName } of processes) {
      if (!connectionName) continue;
      if (listed.has(connectionName)) {
        this.seenConnected.add(id);
        this.missingSince.delete(id);
        continue;
      }
      if (!this.seenConnected.has(id)) continue;
      const since = this.missingSince.get(id) ?? now;
      this.missingSince.set(id, since);
      if (now - since >= goneAfterMs) gone.add(id);
    }
    const registered = new Set(processes.map(({ id }) => id));
    for (const id of this.seenConnected) if (!registered.has(id)) this.seenConnected.delete(id);
    for (const id of this.missingSince.keys()) if (!registered.has(id)) this.missingSince.delete(id);
    return gone;
  }

  private async takeOver(dead: readonly RegisteredProcess[]): Promise<void> {
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
    for (const entry of dead) {
      await this.registry.forget(entry.id);
      this.missingSince.delete(entry.id);
      this.seenConnected.delete(entry.id);
    }
    this.options.onDeadWorkers?.(dead.length);
  }
}

/** The CLIENT SETNAME of a worker process's own connection (no spaces: a registry id is a UUID). */
export function workerConnectionName(workerId: string): string {
  return `ratchet:w:${workerId}`;
}
