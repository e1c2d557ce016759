import { scheduleTimingProblem } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { KeySpace } from '../redis/keys.js';
import { ScheduleStore, type StoredSchedule } from '../redis/schedule-store.js';
import type { ScheduleSpec } from '../schemas/index.js';
import {
  crashPoint,
  decideFire,
  encodeFireDecision,
  type FireDecision,
  isFinished,
  type ScheduleRecord,
  scheduledRunIds,
} from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';
import { assertAgent } from './run-limits.js';
import { getRun, startScheduledRun } from './runs.js';

/** A schedule as a client reads it: its record, its next fire and its latest run. */
export interface ScheduleState {
  record: ScheduleRecord;
  /** When it fires next; undefined while paused (or before its timer is set). */
  nextFireAt: string | undefined;
  lastRunId: string | undefined;
  /** The fire waiting for the previous run to finish (`overlap: queue`). */
  queuedFireAt: string | undefined;
}

/** What one fire came to. */
export type FireOutcome =
  | { kind: 'started'; runId: string }
  | { kind: 'skipped'; reason: string }
  /** `overlap: queue`: the previous run is unfinished; take the fire up again later. */
  | { kind: 'waiting' }
  /** The schedule was deleted. */
  | { kind: 'gone' };

/** How often a fire decides again when the schedule changed under it before giving up for this attempt. */
const staleTries = 10;

/**
 * Schedules (decision 0036): their records and timers, and what each fire does. Config schedules are created
 * or updated by id when a process starts (`syncConfig`); the API creates, pauses, resumes and deletes them;
 * a worker takes up each fire (`fire`), which records its decision once and starts at most one run.
 */
export class Schedules {
  private readonly store: ScheduleStore;

  constructor(private readonly parts: EngineParts) {
    this.store = new ScheduleStore(parts.redis, parts.space);
  }

  get space(): KeySpace {
    return this.parts.space;
  }

  /** Creates a schedule from the API; refused when the id is taken, the agent unknown or the timing unusable. */
  async create(spec: ScheduleSpec): Promise<ScheduleState> {
    this.check(spec);
    const now = this.parts.now().toISOString();
    const record: ScheduleRecord = {
      v: 1,
      spec,
      source: 'api',
      paused: false,
      created_at: now,
      updated_at: now,
    };
    const code = await this.store.put(record, undefined);
    if (code === 'EXISTS') {
      throw new RatchetError(
        'schedule_exists',
        `a schedule with id "${spec.id}" exists: delete it first, or pick another id`,
      );
    }
    try {
      await this.store.syncTimer(spec, false, this.parts.now().getTime());
    } catch (error) {
      // No schedule without its timer: the client's retry of the create finds the id free.
      await this.store.remove(spec.id).catch(() => undefined);
      throw error;
    }
    return this.require(spec.id);
  }

  /**
   * Creates or updates each config schedule by id, keeping its paused state; its timer is replaced only when
   * its timing changed, so processes starting together converge and a missed fire stays pending.
   */
  async syncConfig(specs: readonly ScheduleSpec[]): Promise<void> {
    for (const spec of specs) {
      this.check(spec);
      for (let tries = 0; ; tries += 1) {
        const stored = await this.store.read(spec.id);
        const now = this.parts.now().toISOString();
        const same = stored !== undefined && JSON.stringify(stored.record.spec) === JSON.stringify(spec);
        const paused = stored?.record.paused ?? false;
        if (!same) {
          const record: ScheduleRecord = {
            v: 1,
            spec,
            source: 'config',
            paused,
            created_at: stored?.record.created_at ?? now,
            updated_at: now,
          };
          const code = await this.store.put(record, stored?.rev);
          // Another process wrote it meanwhile: read what it wrote and compare again.
          if (code !== 'OK' && tries < staleTries) continue;
        }
        await this.store.syncTimer(spec, paused, this.parts.now().getTime());
        break;
      }
    }
  }

  async list(): Promise<ScheduleState[]> {
    const ids = await this.store.ids();
    const [stored, next] = await Promise.all([
      Promise.all(ids.map((id) => this.store.read(id))),
      this.store.nextFires(ids),
    ]);
    return stored.flatMap((schedule) =>
      schedule ? [stateOf(schedule, next.get(schedule.record.spec.id))] : [],
    );
  }

  async get(scheduleId: string): Promise<ScheduleState | undefined> {
    const stored = await this.store.read(scheduleId);
    if (!stored) return undefined;
    const next = await this.store.nextFires([scheduleId]);
    return stateOf(stored, next.get(scheduleId));
  }

  /** The latest fires (newest first): when, and what each decided. */
  recentFires(scheduleId: string, count: number): Promise<{ fireAtMs: number; decision: FireDecision }[]> {
    return this.store.recentFires(scheduleId, count);
  }

  async remove(scheduleId: string): Promise<void> {
    if (!(await this.store.remove(scheduleId))) throw notFound(scheduleId);
  }

  /** Pauses (no fire starts anything until resumed; fires due meanwhile are not caught up) or resumes it. */
  async setPaused(scheduleId: string, paused: boolean): Promise<ScheduleState> {
    for (let tries = 0; tries < staleTries; tries += 1) {
      const stored = await this.store.read(scheduleId);
      if (!stored) throw notFound(scheduleId);
      if (stored.record.paused !== paused) {
        const record = { ...stored.record, paused, updated_at: this.parts.now().toISOString() };
        if ((await this.store.put(record, stored.rev)) !== 'OK') continue;
      }
      await this.store.syncTimer(stored.record.spec, paused, this.parts.now().getTime());
      return this.require(scheduleId);
    }
    throw new RatchetError('internal', `schedule ${scheduleId} kept changing while it was paused or resumed`);
  }

  /**
   * Takes up one fire: decides it once (decide-fire.lua; a fire taken up again reads that decision) and, when
   * the decision is a run, starts it under ids derived from the fire, so it starts once whatever the crashes.
   */
  async fire(scheduleId: string, fireAtMs: number): Promise<FireOutcome> {
    for (let tries = 0; tries < staleTries; tries += 1) {
      const stored = await this.store.read(scheduleId);
      if (!stored) return { kind: 'gone' };
      const { record } = stored;
      const ids = scheduledRunIds(record.spec.id, record.created_at, fireAtMs);
      const previous = await this.previousRun(stored);
      const decision = decideFire({
        spec: record.spec,
        paused: record.paused,
        fireAtMs,
        nowMs: this.parts.now().getTime(),
        previous,
        queuedFireMs: stored.queuedFireMs,
        runId: ids.runId,
      });
      const recorded = await this.store.decide(scheduleId, fireAtMs, stored, encodeFireDecision(decision));
      if (recorded === 'stale') continue;
      if (recorded === 'gone') return { kind: 'gone' };
      if (recorded.kind === 'wait') return { kind: 'waiting' };
      if (recorded.kind === 'skip') return { kind: 'skipped', reason: recorded.reason };
      crashPoint('schedule.after_decision');
      await startScheduledRun(this.parts, {
        ...ids,
        runId: recorded.runId,
        agent: record.spec.agent,
        input: record.spec.input,
        origin: { kind: 'schedule', schedule: scheduleId, fire_at: new Date(fireAtMs).toISOString() },
        tenant: record.spec.tenant,
      });
      crashPoint('schedule.after_run_start');
      return { kind: 'started', runId: recorded.runId };
    }
    throw new RatchetError('internal', `schedule ${scheduleId} kept changing while its fire was decided`);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private async previousRun(
    stored: StoredSchedule,
  ): Promise<{ runId: string; finished: boolean } | undefined> {
    if (!stored.lastRun || stored.record.spec.overlap === 'allow') return undefined;
    const run = await getRun(this.parts, stored.lastRun);
    // A run removed by retention finished long ago.
    return { runId: stored.lastRun, finished: run === undefined || isFinished(storedStatus(run.status)) };
  }

  private check(spec: ScheduleSpec): void {
    assertAgent(this.parts.options, spec.agent);
    const problem = scheduleTimingProblem(spec);
    if (problem) {
      throw new RatchetError('invalid_run_settings', `${problem.field}: ${problem.message}`, {
        details: { field: problem.field, limit: null },
      });
    }
  }

  private async require(scheduleId: string): Promise<ScheduleState> {
    const state = await this.get(scheduleId);
    if (!state) throw notFound(scheduleId);
    return state;
  }
}

function stateOf(stored: StoredSchedule, nextFireMs: number | undefined): ScheduleState {
  return {
    record: stored.record,
    nextFireAt:
      stored.record.paused || nextFireMs === undefined ? undefined : new Date(nextFireMs).toISOString(),
    lastRunId: stored.lastRun,
    queuedFireAt: stored.queuedFireMs === undefined ? undefined : new Date(stored.queuedFireMs).toISOString(),
  };
}

/** `waiting_input` is a running run with a question: not finished. */
function storedStatus(status: string): 'running' | 'completed' | 'failed' | 'cancelled' | 'queued' {
  return status === 'completed' || status === 'failed' || status === 'cancelled' ? status : 'running';
}

function notFound(scheduleId: string): RatchetError {
  return new RatchetError('schedule_not_found', `unknown schedule ${scheduleId}`);
}
