import {
  type Job,
  type JobsOptions,
  type Processor,
  raw2NextJobData,
  Worker,
  type WorkerOptions,
} from 'bullmq';
import type { CompletionInCommit } from '../redis/run-store.js';

/** What a commit that completed its own job left for the worker: BullMQ's reply, and when it finished. */
interface CompletedInCommit {
  reply: unknown;
  finishedOn: number;
}

/** What BullMQ's completion and failure steps take after the job: its token, fetch-next's condition, a span. */
type Completion =
  Parameters<Worker['handleCompleted']> extends [unknown, unknown, ...infer Rest] ? Rest : never;

/** The parts of BullMQ's worker this class reads that its types keep private (BullMQ is pinned: 0051). */
interface WorkerInternals {
  mainLoopQueue?: { numTotal(): number } | null;
  updateDelays(limitDelay?: number, delayUntil?: number): void;
}

/**
 * BullMQ's worker for one shard's step queue, whose steps may complete their own job in their last commit
 * (decision 0056): the commit runs BullMQ's `moveToFinished` (with fetch-next) in its own script call, with
 * the keys and arguments this worker's BullMQ backend builds for it (`completionFor`), and this worker then
 * does what BullMQ's own completion does after that call (`handleCompleted`): the job's fields, the
 * `completed` event, and the next job the call fetched, without a second call. A job whose commit did not
 * complete it (any other commit, a park, a failure, a commit refused) is completed by BullMQ as before.
 */
export class StepWorker extends Worker {
  /** The jobs whose processor is running, by their lock token (each job of a worker has its own token). */
  private readonly inProcessor: Map<string, Job>;
  private readonly completedInCommit = new WeakMap<Job, CompletedInCommit>();

  constructor(name: string, processor: Processor, opts: WorkerOptions) {
    const running = new Map<string, Job>();
    super(
      name,
      async (job, token, signal) => {
        if (token) running.set(token, job);
        try {
          return await processor(job, token, signal);
        } finally {
          if (token) running.delete(token);
        }
      },
      opts,
    );
    this.inProcessor = running;
  }

  /**
   * BullMQ's completion of the job holding `token`, for its commit to make (the job's return value is the
   * processor's, `undefined` for every step kind); undefined when this worker runs no such job, is closing,
   * or the job was completed already. Fetch-next is asked on BullMQ's own condition (not closing, not
   * paused, no more jobs in hand than the concurrency).
   */
  completionFor(token: string): CompletionInCommit | undefined {
    const job = this.inProcessor.get(token);
    if (!job?.id || this.closing || this.completedInCommit.has(job)) return undefined;
    const internals = this as unknown as WorkerInternals;
    const inHand = internals.mainLoopQueue?.numTotal() ?? 0;
    const fetchNext = !this.isPaused() && inHand <= this.concurrency;
    // As Job.moveToCompleted passes them: the job's own keep setting, which may be absent (the worker's then).
    const keep = job.opts.removeOnComplete as NonNullable<JobsOptions['removeOnComplete']>;
    const all = this.backend.moveToCompletedArgs(job, undefined, keep, token, fetchNext);
    const keyCount = this.backend.moveToFinishedKeys.length;
    const keys = all.slice(0, keyCount);
    const args = all.slice(keyCount);
    // The ninth argument (fields to update) is only a failure's.
    while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
    if (keys.length !== 14 || args.length !== 8 || keys.some((key) => typeof key !== 'string'))
      return undefined;
    const jobId = job.id;
    return {
      keys: keys as string[],
      args: args as (string | number | Buffer)[],
      done: (reply) => {
        // An error code: the worker's own completion meets it and reports it as BullMQ always does.
        if (typeof reply === 'number' && reply < 0) return;
        this.completedInCommit.set(job, { reply, finishedOn: Number(args[1]) });
        // Its lock is gone with it: the lock extender must not try to renew it.
        this.lockManager.untrackJob(jobId);
      },
    };
  }

  protected override async handleCompleted(result: unknown, job: Job, ...rest: Completion): Promise<Job> {
    const completed = this.completedInCommit.get(job);
    if (!completed) return super.handleCompleted(result, job, ...rest);
    const [token] = rest;
    this.completedInCommit.delete(job);
    // What BullMQ's Job.moveToCompleted and Worker.handleCompleted do after moveToFinished's call.
    job.returnvalue = result;
    job.finishedOn = completed.finishedOn;
    job.attemptsMade += 1;
    this.emit('completed', job, result, 'active');
    const [jobData, jobId, rateLimitDelay, delayUntil] = raw2NextJobData(completed.reply as unknown[]);
    (this as unknown as WorkerInternals).updateDelays(rateLimitDelay, delayUntil);
    return this.nextJobFromJobData(jobData, jobId, token);
  }

  protected override async handleFailed(error: Error, job: Job, ...rest: Completion): Promise<Job> {
    // Thrown after the commit completed the job: Redis holds it completed, and so does this worker.
    if (this.completedInCommit.has(job)) return this.handleCompleted(undefined, job, ...rest);
    return super.handleFailed(error, job, ...rest);
  }
}
