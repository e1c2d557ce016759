import { Queue } from 'bullmq';
import type { ScheduleSpec } from '../schemas/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import {
  decodeFireDecision,
  type FireDecision,
  type ScheduleRecord,
  scheduleRecordSchema,
} from '../workflows/index.js';
import { closeRedis, type RedisClient } from './connection.js';
import { openQueueConnection } from './engine-store.js';
import { type KeySpace, scheduleKeys, scheduleQueueName, schedulesPrefix } from './keys.js';
import { runScript } from './scripts.js';

/** A schedule as read: its record, its revision, its latest run and the fire waiting for it. */
export interface StoredSchedule {
  record: ScheduleRecord;
  rev: string;
  lastRun: string | undefined;
  lastFireMs: number | undefined;
  queuedFireMs: number | undefined;
}

/** The data of every fire job: which schedule (the fire time is in the job's id, `repeat:<id>:<ms>`). */
export interface FireJobData {
  v: 1;
  schedule: string;
}

/** How many decided fires a schedule keeps (a fire taken up again after that many later ones is refused). */
const keptDecisions = 1000;

/** A fire job that fails (Redis away) is tried again; its id stays taken as long as it is kept. */
const fireJobOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 86_400, count: 10_000 },
  removeOnFail: { age: 7 * 86_400 },
} as const;

/**
 * The schedules in Redis (decision 0036): their records and fire decisions (Lua scripts under the schedules'
 * hash tag) and their timers, one BullMQ job scheduler per schedule on the `schedules` queue, whose jobs the
 * workers take up as fires.
 */
export class ScheduleStore {
  private readonly connection: RedisClient;
  private readonly queue: Queue<FireJobData>;

  constructor(
    private readonly redis: RedisClient,
    private readonly space: KeySpace,
  ) {
    this.connection = openQueueConnection(redis);
    this.queue = new Queue<FireJobData>(scheduleQueueName, {
      connection: this.connection,
      prefix: schedulesPrefix(space),
    });
    this.queue.on('error', () => {
      // A failed command rejects its own call, which reports it.
    });
  }

  async ids(): Promise<string[]> {
    const ids = await this.redis.smembers(scheduleKeys(this.space, '').index);
    return ids.sort();
  }

  async read(scheduleId: string): Promise<StoredSchedule | undefined> {
    const keys = scheduleKeys(this.space, scheduleId);
    const [record = null, rev = null, lastRun = null, lastFire = null, queued = null] =
      await this.redis.hmget(keys.schedule, 'record', 'rev', 'last_run', 'last_fire', 'queued');
    if (record === null || rev === null) return undefined;
    return {
      record: parseJsonRecord(scheduleRecordSchema, record, `schedule ${scheduleId}`),
      rev,
      lastRun: lastRun ?? undefined,
      lastFireMs: lastFire === null ? undefined : Number(lastFire),
      queuedFireMs: queued === null ? undefined : Number(queued),
    };
  }

  /** Writes a record: a new schedule (`expectedRev` undefined), or a change of the revision read. */
  async put(record: ScheduleRecord, expectedRev: string | undefined): Promise<'OK' | 'EXISTS' | 'CONFLICT'> {
    const keys = scheduleKeys(this.space, record.spec.id);
    const [code] = await runScript(
      this.redis,
      'put-schedule',
      [keys.index, keys.schedule],
      [record.spec.id, JSON.stringify(record), expectedRev ?? ''],
    );
    return code as 'OK' | 'EXISTS' | 'CONFLICT';
  }

  /** The latest decided fires, newest first. */
  async recentFires(
    scheduleId: string,
    count: number,
  ): Promise<{ fireAtMs: number; decision: FireDecision }[]> {
    const keys = scheduleKeys(this.space, scheduleId);
    const times = await this.redis.zrevrange(keys.fires, 0, Math.max(0, count - 1));
    if (times.length === 0) return [];
    const decisions = await this.redis.hmget(keys.schedule, ...times.map((time) => `fire:${time}`));
    return times.flatMap((time, index) => {
      const decision = decisions[index];
      return decision ? [{ fireAtMs: Number(time), decision: decodeFireDecision(decision) }] : [];
    });
  }

  /** Deletes the record and its timer; false when there was no such schedule. */
  async remove(scheduleId: string): Promise<boolean> {
    const keys = scheduleKeys(this.space, scheduleId);
    await this.queue.removeJobScheduler(scheduleId);
    const [code] = await runScript(
      this.redis,
      'delete-schedule',
      [keys.index, keys.schedule, keys.fires],
      [scheduleId],
    );
    return code === 'OK';
  }

  /**
   * Records a fire's decision, made from `read` (decide-fire.lua): the decision recorded (this one, or one
   * recorded before for the same fire time), `stale` when the schedule changed since it was read, `gone`
   * when it was deleted.
   */
  async decide(
    scheduleId: string,
    fireAtMs: number,
    read: StoredSchedule,
    decision: string,
  ): Promise<FireDecision | 'stale' | 'gone'> {
    const keys = scheduleKeys(this.space, scheduleId);
    const [code, recorded] = await runScript(
      this.redis,
      'decide-fire',
      [keys.schedule, keys.fires],
      [
        fireAtMs,
        read.rev,
        read.lastRun ?? '',
        read.queuedFireMs === undefined ? '' : read.queuedFireMs,
        decision,
        keptDecisions,
      ],
    );
    if (code === 'STALE') return 'stale';
    if (code === 'NO_SCHEDULE') return 'gone';
    if (code === 'DECIDED' && recorded !== undefined) return decodeFireDecision(recorded);
    throw new Error(`decide-fire returned ${code}`);
  }

  /**
   * Makes the schedule's timer match its spec: none while paused; otherwise a job scheduler with its cron
   * expression and time zone, or its interval. A timer that already matches is left alone, so that many
   * processes starting at once converge and a fire missed while none ran stays pending (`catch_up`).
   */
  async syncTimer(spec: ScheduleSpec, paused: boolean, nowMs: number): Promise<void> {
    if (paused) {
      await this.queue.removeJobScheduler(spec.id);
      return;
    }
    const current = await this.queue.getJobScheduler(spec.id);
    const everyMs = spec.every_s === undefined ? undefined : spec.every_s * 1000;
    if (
      current &&
      (current.pattern ?? undefined) === spec.cron &&
      (current.every ?? undefined) === everyMs &&
      (spec.cron === undefined || (current.tz ?? 'UTC') === spec.timezone)
    ) {
      return;
    }
    const timing =
      everyMs === undefined
        ? { pattern: spec.cron as string, tz: spec.timezone }
        : // The first fire one interval from now, not at once (BullMQ's default for an interval).
          { every: everyMs, startDate: nowMs + everyMs };
    await this.queue.upsertJobScheduler(spec.id, timing, {
      name: 'fire',
      data: { v: 1, schedule: spec.id },
      opts: fireJobOptions,
    });
  }

  /** When each schedule fires next (ms), for those with a timer. */
  async nextFires(scheduleIds: readonly string[]): Promise<Map<string, number>> {
    const next = new Map<string, number>();
    const found = await Promise.all(scheduleIds.map((id) => this.queue.getJobScheduler(id)));
    found.forEach((scheduler, index) => {
      const id = scheduleIds[index];
      if (scheduler?.next !== undefined && id !== undefined) next.set(id, scheduler.next);
    });
    return next;
  }

  async close(): Promise<void> {
    try {
      await this.queue.close();
    } finally {
      await closeRedis(this.connection);
    }
  }
}

/** A fire job's fire time, from its id (`repeat:<schedule>:<ms>`, BullMQ's job schedulers). */
export function fireTimeOf(jobId: string | undefined): number | undefined {
  const millis = Number(jobId?.slice(jobId.lastIndexOf(':') + 1));
  return Number.isSafeInteger(millis) && millis > 0 ? millis : undefined;
}
