import { ErrorCode, Job, type JobsOptions, optsEncodeMap, Queue, type Telemetry } from 'bullmq';
import type { Logger } from '../log/index.js';
import { stepJobId } from '../workflows/ids.js';
import type { NextStep } from '../workflows/index.js';
import type { IterationJobData, TeamTurnJobData, ToolJobData } from '../workflows/job-data.js';
import type { RunRecord } from '../workflows/run-record.js';
import type { RedisClient } from './connection.js';
import type { KeySpace } from './keys.js';
import { runKeys, shardPrefix, stepQueueName } from './keys.js';
import { redisOutageLog } from './redis-outage.js';

/** Names of BullMQ jobs = step kinds. */
export const stepJobName = { iteration: 'iteration', tool: 'tool', teamTurn: 'team-turn' } as const;
export type StepJobName = (typeof stepJobName)[keyof typeof stepJobName];

export interface StepJobSettings {
  /** BullMQ attempts: the configured step attempts plus headroom for committing a final failure. */
  attempts: number;
  keepCompletedSeconds: number;
}

/** Extra BullMQ attempts beyond `worker.step_attempts`, used only to record a step's final failure. */
export const finalFailureHeadroom = 3;

/**
 * The BullMQ priority of a root run's first step while the run waits for its admission (decision 0053).
 * BullMQ takes every job of priority 0 (all other steps) before any prioritized job, so the recheck of a run
 * still queued never runs ahead of a step of an admitted run; `wakeAdmitted` gives the step priority 0.
 */
export const queuedRunPriority = 1;

/** The step queue of each shard. */
export class StepQueues {
  readonly queues: Queue[];
  /** storedOptionsJson's part after the job id (the settings do not change). */
  private optionsAfterId: string | undefined;

  constructor(
    connection: RedisClient,
    private readonly space: KeySpace,
    private readonly settings: StepJobSettings,
    logger: Logger,
    /** BullMQ's queue spans (its telemetry interface, src/telemetry/queue-telemetry.ts), when traces are on: jobs added here are `add` spans. */
    private readonly telemetry?: Telemetry,
  ) {
    this.queues = [];
    const outage = redisOutageLog(logger);
    let lastErrorLogged = 0;
    const onError = (error: Error) => {
      if (outage.absorb(error)) return;
      // The shared connection reports the same outage once per client: log it at most every 5 s.
      if (Date.now() - lastErrorLogged < 5000) return;
      lastErrorLogged = Date.now();
      logger.warn({ err: error }, 'step queue connection error');
    };
    for (let shard = 0; shard < space.shards; shard += 1) {
      const prefix = shardPrefix(space, shard);
      const queue = new Queue(stepQueueName, { connection, prefix, ...(telemetry ? { telemetry } : {}) });
      queue.on('error', onError);
      this.queues.push(queue);
    }
  }

  queue(shard: number): Queue {
    const queue = this.queues[shard];
    if (!queue) throw new Error(`no queue for shard ${shard}`);
    return queue;
  }

  jobOptions(jobId: string): JobsOptions {
    return {
      jobId,
      attempts: this.settings.attempts,
      backoff: { type: 'ratchet' },
      removeOnComplete: { age: this.settings.keepCompletedSeconds },
      removeOnFail: { age: this.settings.keepCompletedSeconds },
    };
  }

  /**
   * The steps `next` as the jobs a commit script adds in its own call (includes/add-step-job.lua, decision
   * 0051): JSON of each job's id, name, data and options as BullMQ stores them; '' when they are to be added
   * with Queue.add after the commit: a step of another kind (a team turn, a wake-up), or traced jobs (BullMQ
   * carries the trace's context in the job's options when it adds the job).
   */
  jobsInCommit(next: readonly NextStep[]): string {
    if (this.telemetry || next.length === 0) return '';
    const jobs: { name: string; id: string; data: unknown }[] = [];
    for (const step of next) {
      if (step.kind === 'iteration') {
        jobs.push({
          name: stepJobName.iteration,
          id: stepJobId.iteration(step.data.run_id, step.data.iteration),
          data: step.data,
        });
      } else if (step.kind === 'tools') {
        for (const call of step.calls) {
          jobs.push({
            name: stepJobName.tool,
            id: stepJobId.tool(call.run_id, call.iteration, call.index),
            data: call,
          });
        }
      } else return '';
    }
    const timestamp = String(Date.now());
    return JSON.stringify(
      jobs.map((job) => ({
        id: job.id,
        name: job.name,
        data: JSON.stringify(job.data),
        opts: this.storedOptionsJson(job.id),
        timestamp,
      })),
    );
  }

  /**
   * Adds iteration n. After an iteration that asked for tools, the tool job whose outcome completes the
   * batch adds it (see `continueAfterTools`): no iteration job waits in the queue while its tools run.
   */
  async addIteration(shard: number, data: IterationJobData): Promise<void> {
    const jobId = stepJobId.iteration(data.run_id, data.iteration);
    await this.queue(shard).add(stepJobName.iteration, data, this.jobOptions(jobId));
  }

  /**
   * JSON.stringify(storedOptions(this.jobOptions(jobId))), without building it for every job: only the id
   * differs between step jobs, and it comes first.
   */
  private storedOptionsJson(jobId: string): string {
    if (this.optionsAfterId === undefined) {
      const { jobId: _id, ...others } = this.jobOptions('');
      const othersJson = JSON.stringify(storedOptions(others));
      this.optionsAfterId = othersJson === '{}' ? '}' : `,${othersJson.slice(1)}`;
    }
    return `{"${jobIdOption}":${JSON.stringify(jobId)}${this.optionsAfterId}`;
  }

  /** Adds one job per tool call of a reply; they run in parallel. */
  async addToolCalls(shard: number, calls: readonly ToolJobData[]): Promise<void> {
    const jobs = calls.map((data) => ({
      name: stepJobName.tool,
      data,
      opts: this.jobOptions(stepJobId.tool(data.run_id, data.iteration, data.index)),
    }));
    const [only] = jobs;
    // One call (the common case) needs no MULTI.
    if (jobs.length === 1 && only) await this.queue(shard).add(only.name, only.data, only.opts);
    else await this.queue(shard).addBulk(jobs);
  }

  /** Adds turn n of a team's run. */
  async addTeamTurn(shard: number, data: TeamTurnJobData): Promise<void> {
    const jobId = stepJobId.iteration(data.run_id, data.iteration);
    await this.queue(shard).add(stepJobName.teamTurn, data, this.jobOptions(jobId));
  }

  /**
   * Wakes a step parked in the delayed set (a question was answered); a step not parked is left alone. One
   * script call: BullMQ's promote, which answers "not in the delayed state" for a job running, waiting or gone.
   */
  async wake(shard: number, jobId: string): Promise<void> {
    await ignoreNotParked(this.jobShell(shard, jobId).promote());
  }

  /**
   * Wakes the first step of a run just admitted (decision 0053): the step leaves the queued runs' lane
   * (`queuedRunPriority`) for that of every other step, wherever it is (parked, or woken by its recheck and
   * waiting behind other steps), then is promoted if parked. Two script calls, in this order: promoted first,
   * a prioritized step would wait in the slow lane.
   */
  async wakeAdmitted(shard: number, jobId: string): Promise<void> {
    const job = this.jobShell(shard, jobId);
    await ignoreNotParked(job.changePriority({ priority: 0 }));
    await ignoreNotParked(job.promote());
  }

  /**
   * The admission sweep's safety net for an admitted run whose wake-up was lost (decision 0053): its first
   * step, still parked or waiting in the queued runs' lane (which runs only when no other step waits), is
   * woken as an admitted run's. A step running, or waiting already in the admitted runs' order, is left alone
   * (waking it would put it at the back). Returns whether it was woken.
   */
  async wakeStalledAdmitted(shard: number, jobId: string): Promise<boolean> {
    const state = await this.queue(shard).getJobState(jobId);
    if (state !== 'prioritized' && state !== 'delayed') return false;
    await this.wakeAdmitted(shard, jobId);
    return true;
  }

  /** A handle on a stored job by its id, for BullMQ's scripts that need only the id (no read of the job). */
  private jobShell(shard: number, jobId: string): Job {
    return new Job(this.queue(shard), '', null, {}, jobId);
  }

  /**
   * Wakes the step that waits for this run, when it is a child run. Called when the run finishes, and again
   * by a step that finds it finished (a crash may have come between the two). Safe to call any time: a step
   * not parked is left alone, and a woken step that finds its children still running parks again.
   */
  async wakeParent(run: Pick<RunRecord, 'session_id' | 'parent'>): Promise<void> {
    if (!run.parent) return;
    await this.wake(runKeys(this.space, run.session_id, run.parent.run_id).shard, run.parent.job_id);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.queues.map((queue) => queue.close()));
  }
}

/** The name a job's id has in its stored options. */
const jobIdOption = (optsEncodeMap as Record<string, string>).jobId ?? 'jobId';

/** A job's options as BullMQ stores them in the job's hash (its short names for the options it has them for). */
function storedOptions(options: JobsOptions): Record<string, unknown> {
  const encode = optsEncodeMap as Record<string, string>;
  return Object.fromEntries(
    Object.entries(options)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [encode[name] ?? name, value]),
  );
}

/** A BullMQ job call that may find the job elsewhere than parked (it runs, or ran) or gone: nothing to do. */
async function ignoreNotParked(call: Promise<void>): Promise<void> {
  try {
    await call;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== ErrorCode.JobNotInState && code !== ErrorCode.JobNotExist) throw error;
  }
}
