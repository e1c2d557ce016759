import type { Job } from 'bullmq';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import { type KeySpace, shardOf } from '../redis/keys.js';
import {
  forgetWaitingStep,
  isWaitingForWorker,
  markWaitingForWorker,
  noteWaitingStep,
  resumeWaitingRun,
  stepsOfEndedRuns,
  type WaitingStep,
  waitingSteps,
} from '../redis/waiting-for-worker.js';
import { readWorkers } from '../redis/worker-registry.js';
import {
  type AgentDefinition,
  type Capabilities,
  contractNeeds,
  crashPoint,
  mergeNeeds,
  missingNeeds,
  type Needs,
  type NeedsDefinition,
  needsOf,
  servesAll,
} from '../workflows/index.js';

/** Where a step runs and for whom, as its job data says. */
export interface StepPlace {
  session_id: string;
  run_id: string;
  agent: string;
  group?: string | undefined;
  lineage?: readonly string[] | undefined;
  /** The hash of the definition the run recorded (decision 0030): its needs, not the worker's config. */
  definition?: string | undefined;
  /** What the run inherited (decision 0047): the definitions of the agents above it, whose toolboxes it has. */
  inherited?: { lineage: readonly string[] } | undefined;
}

/**
 * What a run of a recorded definition needs (decision 0030): its own entry's needs, and for a handoff group
 * its members' (recorded with it, so the worker needs their code, not their names in its config), and the
 * contract rule kinds its contracts name (decision 0049).
 */
export function needsOfRecorded(definition: AgentDefinition): Needs {
  // Asked before every step: worked out once per definition the worker holds (a recorded definition
  // never changes; its hash names its content).
  let needs = recordedNeeds.get(definition);
  if (!needs) {
    needs = needsOfDefinition(definition);
    recordedNeeds.set(definition, needs);
  }
  return needs;
}

const recordedNeeds = new WeakMap<AgentDefinition, Needs>();

function needsOfDefinition(definition: AgentDefinition): Needs {
  // The rule kinds its contracts name in code: a worker without one cannot check the run's answer.
  const contracts = contractNeeds(definition.contracts);
  if (definition.kind === 'handoff') {
    return mergeNeeds(
      ...Object.values(definition.members).map((member) => needsOf(member as NeedsDefinition)),
      contracts,
    );
  }
  return mergeNeeds(needsOf(definition.entry as NeedsDefinition), contracts);
}

/** Another live worker, as its heartbeat record advertises it. */
interface LiveWorker {
  id: string;
  shards: readonly number[] | null;
  capabilities: Capabilities | null;
}

export interface CapabilityGateOptions {
  redis: RedisClient;
  space: KeySpace;
  workerId: string;
  /** The shards this worker consumes: it wakes only steps it could take. */
  shards: readonly number[];
  capabilities: Capabilities;
  /**
   * The resolved definition a step's run works as, by agent (handoff group, team) name; undefined when this
   * worker has none (then the name itself is missing). The run's recorded definition once runs record it.
   */
  definitionOf: (name: string) => NeedsDefinition | undefined;
  /**
   * The needs of a recorded definition by its hash (read once per hash and kept by the worker); undefined
   * when the hash is not recorded (then the names of the step's agents are checked as above).
   */
  recordedNeeds: (hash: string) => Promise<Needs | undefined>;
  /** `worker.capability_wait_s` in ms. */
  waitMs: number;
  /** How often a run waiting for a worker is looked at again (`worker.question_recheck_ms`). */
  recheckMs: number;
  eventsMaxLength: number;
  /** Wakes a parked step (promotes its delayed job). */
  wake: (sessionId: string, jobId: string) => Promise<void>;
  logger: Logger;
}

/** The delay of a step handed back while a capable worker is live: short, doubling per hand-back, bounded. */
export const handBackDelay = { firstMs: 100, maxMs: 5_000 } as const;
/** How often a worker checks whether the run of a waiting step it cannot serve has ended: capability_wait_s, at least 5 s. */
const endedCheckMinMs = 5_000;
/** How many times one look ends the wait of one step (see endWait). */
const maxEndRounds = 3;
/** How many steps' hand-back counts a worker keeps (it forgets them all past this). */
const handBackMemory = 10_000;

/**
 * The worker's side of decision 0031. Before a step runs, its needs (from its run's definition) are checked
 * against what this worker serves, in memory. A step this worker cannot serve is handed back to the queue
 * (BullMQ's delayed set, with its lock token: no attempt spent, no worker held):
 *  - when a live worker advertises what is missing, after a short delay that doubles each time this worker
 *    hands the same step back (100 ms to 5 s), so incapable workers never spin on it;
 *  - otherwise it is noted in the waiting steps (beside the worker registry) and parked until
 *    `capability_wait_s` after it was first handed back; past that its run is recorded as waiting_for_worker
 *    (once, fenced) and it is parked until the next recheck.
 * Every look (a fraction of a second), each worker reads the registry and a page of the waiting steps; for a
 * step it serves, it ends the run's wait (once) and wakes the step, which it or another capable worker
 * takes at once.
 */
export class CapabilityGate {
  private live: LiveWorker[] = [];
  private readonly handBacks = new Map<string, number>();
  private readonly needsCache = new Map<string, string[]>();
  /** Job ids of the waiting steps seen at the last look: a capable worker taking one ends its run's wait first. */
  private waitingJobs = new Set<string>();
  private cursor = '0';
  /** When this worker last checked whether a waiting step's run ended (each at most once per wait). */
  private readonly checkedAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly options: CapabilityGateOptions) {}

  /** Looks every `everyMs` (and once now). */
  async start(everyMs: number): Promise<void> {
    await this.look();
    this.timer = setInterval(() => void this.look(), everyMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The names this worker lacks of what the step needs (`tool:crm_lookup`); [] when it has them all. */
  async missingFor(place: StepPlace): Promise<string[]> {
    const recorded =
      place.definition === undefined ? undefined : await this.options.recordedNeeds(place.definition);
    // The definitions the agents above a child run worked under when it started (decision 0047): it
    // inherits their toolboxes, so it needs their code.
    const lineage = place.lineage ?? [];
    const aboveHashes =
      recorded && place.inherited && place.inherited.lineage.length === lineage.length
        ? place.inherited.lineage
        : [];
    const above = await Promise.all(aboveHashes.map((hash) => this.options.recordedNeeds(hash)));
    const aboveRecorded = above.length > 0 && above.every((needs) => needs !== undefined);
    // A recorded definition stands for the run's agent (and group); the agents above a child run that
    // recorded none are checked by name where this worker knows them.
    const names = recorded
      ? aboveRecorded
        ? []
        : [...lineage]
      : [place.agent, ...(place.group ? [place.group] : []), ...lineage];
    const key = [place.definition ?? '', ...(aboveRecorded ? aboveHashes : []), '', ...names].join('\u0000');
    const cached = this.needsCache.get(key);
    if (cached) return cached;
    const unknown: string[] = [];
    const needs: Needs[] = recorded ? [recorded] : [];
    if (aboveRecorded) needs.push(...(above as Needs[]));
    for (const name of names) {
      const definition = this.options.definitionOf(name);
      if (definition) needs.push(needsOf(definition));
      else if (!recorded) unknown.push(name);
    }
    const missing = missingNeeds(mergeNeeds({ agents: unknown }, ...needs), this.options.capabilities);
    if (this.needsCache.size >= handBackMemory) this.needsCache.clear();
    this.needsCache.set(key, missing);
    return missing;
  }

  /**
   * Hands the step back to the queue for a worker that serves `missing` (see the class). The caller throws
   * BullMQ's DelayedError after it.
   */
  async handBack(
    job: Job,
    token: string,
    place: StepPlace,
    missing: readonly string[],
    deadlineMs: number | undefined,
  ): Promise<void> {
    const jobId = job.id as string;
    const { options } = this;
    const shard = shardOf(options.space, place.session_id);
    const now = Date.now();
    const count = (this.handBacks.get(jobId) ?? 0) + 1;
    if (this.handBacks.size >= handBackMemory) this.handBacks.clear();
    this.handBacks.set(jobId, count);
    const shortDelay = () =>
      now + Math.min(handBackDelay.maxMs, handBackDelay.firstMs * 2 ** Math.min(count - 1, 16));
    let capable = this.capableLive(shard, missing);
    let wakeAt: number;
    if (capable) {
      wakeAt = shortDelay();
    } else {
      const entry = await noteWaitingStep(options.redis, options.space, {
        job_id: jobId,
        session_id: place.session_id,
        run_id: place.run_id,
        shard,
        missing: [...missing],
        since: now,
      });
      const waitEndsAt = entry.since + options.waitMs;
      // The wait ran out by this worker's view of the live workers, which is up to a look old: a capable
      // worker may have appeared (and ended this very wait) since. Marking is rare, so the registry is read
      // again before it: a run is marked only when no live worker serves it now.
      if (now >= waitEndsAt) {
        await this.refreshLive();
        capable = this.capableLive(shard, missing);
      }
      if (capable) {
        wakeAt = shortDelay();
      } else if (now >= waitEndsAt) {
        crashPoint('capability.before_wait_mark');
        const outcome = await markWaitingForWorker(options.redis, options.space, {
          sessionId: place.session_id,
          runId: place.run_id,
          jobId,
          lockToken: token,
          missing,
          since: new Date(entry.since).toISOString(),
          now: new Date(now).toISOString(),
          eventsMaxLength: options.eventsMaxLength,
        });
        if (outcome === 'marked') {
          crashPoint('capability.after_wait_mark');
          // A capable worker that ended an earlier wait of this step may have removed its entry after this
          // worker read it: noted again, so the worker that serves the step finds it and ends this wait.
          await noteWaitingStep(options.redis, options.space, entry, 'again');
          options.logger.warn(
            { run_id: place.run_id, job_id: jobId, missing },
            'no live worker serves what this step needs: its run waits for a worker',
          );
        }
        wakeAt = now + options.recheckMs;
      } else {
        wakeAt = waitEndsAt;
      }
    }
    options.logger.debug({ job_id: jobId, missing, capable, hand_backs: count }, 'step handed back');
    await job.moveToDelayed(Math.min(wakeAt, deadlineMs ?? Number.POSITIVE_INFINITY), token);
  }

  /** A step this worker serves, of a run seen waiting for a worker: the wait ends before the step runs. */
  async beforeRun(jobId: string, place: StepPlace): Promise<void> {
    this.handBacks.delete(jobId);
    if (!this.waitingJobs.has(jobId)) return;
    await this.endWait(jobId, place.session_id, place.run_id, false);
  }

  /**
   * Ends the wait of a run whose step this worker is running although none of its looks saw the step waiting
   * (it took the step off its recheck timer first): the step that loaded the run marked does it, so a step that
   * finishes the run still ends its wait, with the worker_found event (decision 0031).
   */
  async endWaitOfRunning(jobId: string, sessionId: string, runId: string): Promise<void> {
    await this.endWait(jobId, sessionId, runId, false);
  }

  private async endWait(jobId: string, sessionId: string, runId: string, wake: boolean): Promise<void> {
    const { options } = this;
    // A worker whose view of the live workers was older than this one's may take the woken step and mark the
    // run again before the entry is removed (its own note of the step goes with it): the run's marker says
    // so, and this worker ends that wait too, so every wait has its end. Bounded: a worker reads the
    // registry again before it marks, so a second round is rare and a third is a worker taken for dead.
    for (let round = 0; round < maxEndRounds; round += 1) {
      crashPoint('capability.before_resume');
      const outcome = await resumeWaitingRun(options.redis, options.space, {
        sessionId,
        runId,
        workerId: options.workerId,
        now: new Date().toISOString(),
        eventsMaxLength: options.eventsMaxLength,
      });
      if (outcome === 'conflict') return;
      if (outcome === 'resumed') {
        crashPoint('capability.after_resume');
        options.logger.info({ run_id: runId, job_id: jobId }, 'a run waiting for a worker goes on here');
      }
      if (wake) await options.wake(sessionId, jobId);
      await forgetWaitingStep(options.redis, options.space, jobId);
      this.waitingJobs.delete(jobId);
      if (outcome === 'finished') return;
      if (!(await isWaitingForWorker(options.redis, options.space, sessionId, runId))) return;
    }
  }

  /** Removes the entries of runs that ended while they waited (each checked at most once per wait). */
  private async forgetEnded(steps: readonly WaitingStep[]): Promise<void> {
    const now = Date.now();
    const due = steps.filter(
      (step) =>
        now - (this.checkedAt.get(step.job_id) ?? 0) >= Math.max(endedCheckMinMs, this.options.waitMs),
    );
    if (this.checkedAt.size >= handBackMemory) this.checkedAt.clear();
    for (const step of due) this.checkedAt.set(step.job_id, now);
    const { redis, space } = this.options;
    for (const step of await stepsOfEndedRuns(redis, space, due)) {
      await forgetWaitingStep(redis, space, step.job_id);
      this.checkedAt.delete(step.job_id);
    }
  }

  /** Whether a live worker other than this one consumes `shard` and serves every name of `missing`. */
  private capableLive(shard: number, missing: readonly string[]): boolean {
    return this.live.some(
      (worker) =>
        worker.id !== this.options.workerId &&
        worker.capabilities !== null &&
        (worker.shards === null || worker.shards.includes(shard)) &&
        servesAll(worker.capabilities, missing),
    );
  }

  private async refreshLive(): Promise<void> {
    const workers = await readWorkers(this.options.redis, this.options.space);
    this.live = workers.filter((worker) => worker.alive);
  }

  /**
   * One look: the live workers, and a page of the waiting steps (those this worker serves are woken). The
   * worker looks on a timer (`start`); a test may look at a moment it chooses.
   */
  async look(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    const { options } = this;
    try {
      await this.refreshLive();
      const page = await waitingSteps(options.redis, options.space, this.cursor);
      this.cursor = page.cursor;
      const seen = new Set(this.cursor === '0' ? [] : this.waitingJobs);
      const unserved: WaitingStep[] = [];
      for (const step of page.steps) {
        if (!options.shards.includes(step.shard) || !servesAll(options.capabilities, step.missing)) {
          seen.add(step.job_id);
          unserved.push(step);
          continue;
        }
        await this.endWait(step.job_id, step.session_id, step.run_id, true);
      }
      this.waitingJobs = seen;
      await this.forgetEnded(unserved);
    } catch (error) {
      options.logger.warn({ err: error }, 'capability look failed: trying again');
    } finally {
      this.busy = false;
    }
  }
}
