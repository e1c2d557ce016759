import { DelayedError, type Job, type Processor, UnrecoverableError } from 'bullmq';
import { RatchetError, toRatchetError, untilAborted, withoutSecrets } from '../errors/index.js';
import { type Logger, lazyChild } from '../log/index.js';
import { finalFailureHeadroom } from '../redis/step-queues.js';
import { parseRecord } from '../schemas/parse.js';
import {
  backoffDelay,
  decideRetry,
  type ParkJob,
  type RetrySettings,
  runStep,
  type StepContext,
  type StepKind,
  type StepServices,
  stepKinds,
} from '../workflows/index.js';
import type { CapabilityGate } from './capability-gate.js';
import { setTimeoutAt } from './long-timer.js';
import type { RunCancellations } from './run-cancellations.js';

/**
 * A failed attempt handed back to BullMQ for a retry, carrying the delay our retry policy decided (BullMQ's
 * backoff strategy reads it from the error it is given). BullMQ records its message and stack.
 */
class RetryAfter extends Error {
  readonly delayMs: number;

  constructor(error: RatchetError, delayMs: number) {
    super(error.message);
    this.name = error.name;
    this.delayMs = delayMs;
    if (error.stack !== undefined) this.stack = error.stack;
  }
}

export interface StepProcessorOptions {
  services: StepServices;
  cancellations: RunCancellations;
  retry: RetrySettings;
  logger: Logger;
  isShuttingDown: () => boolean;
  /** `worker.max_stalled_count`: a step taken over more often than this fails, recorded (see stallHeadroom). */
  maxStalledCount: number;
  /** The shard whose queue holds a session's steps (a label of the step metrics). */
  shardOf: (sessionId: string) => number;
  /** Hands back steps whose code this worker lacks (decision 0031); none: every step runs here. */
  capabilities?: CapabilityGate | undefined;
}

/**
 * BullMQ's own stall limit is set this much above `worker.max_stalled_count`, so a step that keeps killing
 * its workers (a poison step) reaches the processor again and fails through its kind, which records the
 * failure (a tool call gets an error result and the run goes on; an iteration fails its run) instead of
 * BullMQ failing the job without a trace and leaving its run waiting for ever. More than one, so a crash
 * while the failure is recorded is taken over too.
 */
export const stallHeadroom = 3;

/** BullMQ's custom backoff: the delay our retry policy decided (it honours retry-after). */
export function backoffStrategy(retry: RetrySettings) {
  return (attemptsMade: number, _type?: string, error?: Error): number =>
    error instanceof RetryAfter ? error.delayMs : backoffDelay(attemptsMade, retry, Math.random());
}

/**
 * The one lifecycle every step kind runs through: parse the job, execute the kind, and on failure decide
 * (in one place) whether to retry, fail the run, or hand the job back because the worker is shutting down.
 */
export function createStepProcessor(options: StepProcessorOptions): Processor {
  return async (job: Job, token?: string, signal?: AbortSignal) => {
    const kind = stepKinds.get(job.name);
    if (!kind) throw new UnrecoverableError(`unknown step kind "${job.name}"`);
    if (!token || !job.id || !signal) {
      throw new UnrecoverableError('a step job needs an id, a lock token and an abort signal');
    }
    let data: {
      session_id: string;
      run_id: string;
      agent: string;
      group?: string;
      lineage?: string[];
      chat_id: string;
      deadline_at?: string;
      root_run_id?: string;
    };
    try {
      data = parseRecord(kind.dataSchema, job.data, `data of job ${job.id}`) as typeof data;
    } catch (error) {
      if (error instanceof RatchetError && error.code === 'record_too_new') {
        // Written by a newer Ratchet during a rolling deploy: a later attempt may reach a worker of that version.
        options.logger.warn({ err: error, job_id: job.id }, 'step job data is of a newer version: retrying');
        throw error;
      }
      options.logger.error({ err: error, job_id: job.id }, 'step job data does not parse: dropping the job');
      throw new UnrecoverableError((error as Error).message);
    }
    const { services } = options;
    // BullMQ's signal: aborted on shutdown, or by a cancellation of the run broadcast to every worker.
    const release = options.cancellations.watch(data.run_id, job.id);
    const store = services.stores.open(data, job.id, token, {
      worker: services.workerId,
      at: services.now().toISOString(),
      attempt: job.attemptsMade + 1,
      started: job.attemptsStarted,
    });
    const deadline = stepDeadline(data.deadline_at, signal);
    const context: StepContext = {
      services,
      jobId: job.id,
      sessionId: data.session_id,
      lockToken: token,
      store,
      attempt: job.attemptsMade + 1,
      started: job.attemptsStarted,
      signal: deadline.signal,
      deadlineMs: deadline.ms,
      logger: lazyChild(options.logger, () => ({
        job_id: job.id,
        step: job.name,
        ...kind.describe(data as never),
        ...services.observer?.logFields(data),
      })),
    };
    const startMs = services.observer ? Date.now() : 0;
    let outcome: 'done' | 'parked' | 'failed' = 'failed';
    // Parking moves the job to BullMQ's delayed set, holding no worker (see runStep).
    const parkJob = (wakeAt: number) => job.moveToDelayed(wakeAt, token);
    try {
      try {
        if (deadline.passed()) {
          // The run is past its deadline: no attempt of its steps runs; the kind fails it (see below).
          await runStep(context, kind.fail(context, data as never, deadlineError(data.deadline_at)), parkJob);
          return;
        }
        if (context.attempt > (job.opts.attempts ?? 1) - finalFailureHeadroom) {
          // Attempts are used up, and an earlier attempt could not record the failure: record it now.
          const reason = job.failedReason ?? 'the step failed on every attempt';
          await runStep(
            context,
            kind.fail(context, data as never, new RatchetError('internal', reason)),
            parkJob,
          );
          return;
        }
        if (job.stalledCounter > options.maxStalledCount) {
          const reason = `the step was cut short ${job.stalledCounter} times (the workers running it died or stalled; worker.max_stalled_count is ${options.maxStalledCount})`;
          context.logger.error({ stalled: job.stalledCounter }, 'step stalled too often: failing it');
          await runStep(
            context,
            kind.fail(context, data as never, new RatchetError('step_stalled', reason)),
            parkJob,
          );
          return;
        }
        const gate = options.capabilities;
        if (gate) {
          // Code this worker lacks: back to the queue for a worker that has it, no attempt spent.
          const missing = gate.missingFor(data);
          if (missing.length > 0) {
            outcome = 'parked';
            await gate.handBack(job, token, data, missing, deadline.ms);
            throw new DelayedError();
          }
          await gate.beforeRun(job.id, data);
        }
        const end = await endsByItself(
          runStep(context, kind.execute(context, data as never), parkJob),
          context.signal,
        );
        outcome = end;
        // BullMQ's way of saying that the processor moved the job itself.
        if (end === 'parked') throw new DelayedError();
      } catch (thrown) {
        if (thrown instanceof DelayedError) throw thrown;
        await handleStepError(kind, context, data, thrown, options, parkJob);
        return;
      }
    } finally {
      deadline.clear();
      release();
      services.observer?.stepEnded({
        kind: kind.name,
        shard: options.shardOf(data.session_id),
        durationMs: Date.now() - startMs,
        outcome,
        queueWaitMs:
          job.attemptsStarted === 1 && !job.opts.delay && job.processedOn !== undefined
            ? Math.max(0, job.processedOn - job.timestamp)
            : undefined,
      });
    }
  };
}

/**
 * The step's signal: BullMQ's (shutdown, cancellation), aborted too at the run's deadline, so a model or
 * tool call in flight stops there whichever worker holds it.
 */
function stepDeadline(deadlineAt: string | undefined, signal: AbortSignal) {
  const ms = deadlineAt === undefined ? undefined : Date.parse(deadlineAt);
  if (ms === undefined) return { ms, signal, passed: () => false, clear: () => {} };
  const controller = new AbortController();
  const abort = () => controller.abort(signal.aborted ? signal.reason : deadlineError(deadlineAt));
  signal.addEventListener('abort', abort, { once: true });
  // Not setTimeout: a deadline more than 24.8 days out would overflow it and fire at once.
  const timer = setTimeoutAt(abort, ms);
  return {
    ms,
    signal: controller.signal,
    passed: () => Date.now() >= ms,
    clear: () => {
      timer.clear();
      signal.removeEventListener('abort', abort);
    },
  };
}

/**
 * How long a step whose signal aborted (a cancel, the run's deadline, a shutdown's) is given to end by itself
 * before the worker stops waiting for it: well under the shutdown's hand-back grace, so a step handed back
 * at a shutdown is handed back in time.
 */
export const abortGraceMs = 1_000;

/**
 * The step's execution, unless its signal aborted `abortGraceMs` ago and it still has not ended: then it
 * rejects with the signal's reason, and the processor ends the step the way the signal says (the run fails
 * at its deadline, a cancelled step ends, a shutdown hands the job back), freeing the worker's slot. Code
 * that ignores its signal (a tool handler, a model provider, a middleware that never settles) is left
 * behind: whatever it tries to write later is fenced (the job's lock token, the run's finished state).
 */
function endsByItself<T>(execution: Promise<T>, signal: AbortSignal): Promise<T> {
  const grace = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const startGrace = () => {
    timer = setTimeout(() => grace.abort(signal.reason), abortGraceMs);
  };
  if (signal.aborted) startGrace();
  else signal.addEventListener('abort', startGrace, { once: true });
  return untilAborted(execution, grace.signal).finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', startGrace);
  });
}

function deadlineError(deadlineAt: string | undefined): RatchetError {
  return new RatchetError('deadline_exceeded', `the run passed its deadline (${deadlineAt})`);
}

async function handleStepError(
  kind: StepKind<never>,
  context: StepContext,
  data: unknown,
  thrown: unknown,
  options: StepProcessorOptions,
  parkJob: ParkJob,
): Promise<void> {
  // From here the error may be recorded (events, the run record, BullMQ's failed reason) and logged.
  const error = withoutSecrets(toRatchetError(thrown));
  if (error.code !== 'lock_lost' && context.deadlineMs !== undefined && Date.now() >= context.deadlineMs) {
    // Cut short by the run's deadline (or failing past it): no retry; the kind fails the run, or a tool
    // call gets an error result and the next iteration fails the run.
    context.logger.warn({ err: error }, 'step stopped: the run passed its deadline');
    const why = deadlineError(new Date(context.deadlineMs).toISOString());
    await runStep(context, kind.fail(context, data as never, why), parkJob);
    return;
  }
  if (error.code === 'lock_lost') {
    context.logger.warn({ err: error }, 'lost the job lock: another worker continues this step');
    throw error;
  }
  if (error.code === 'cancelled' || (context.signal.aborted && !options.isShuttingDown())) {
    // The run was cancelled while this step ran: the step ends here; its commit would be refused anyway.
    context.logger.info('step stopped: its run was cancelled');
    return;
  }
  if (options.isShuttingDown() && context.signal.aborted) {
    // Hand the job back without spending an attempt; another worker takes it at once.
    await parkJob(Date.now());
    context.logger.info('worker shutting down: step handed back to the queue');
    throw new DelayedError();
  }
  // A provider may set its own retries (rate_limit.max_retries, base_delay_ms) for its errors.
  const retry = {
    ...options.retry,
    ...(typeof error.details?.max_attempts === 'number' ? { attempts: error.details.max_attempts } : {}),
    ...(typeof error.details?.backoff_base_ms === 'number'
      ? { backoffBaseMs: error.details.backoff_base_ms }
      : {}),
  };
  const decision = decideRetry(error, context.attempt, retry, Math.random());
  const retryInMs = decision.retry ? decision.delayMs : null;
  context.logger[decision.retry ? 'warn' : 'error'](
    { err: error, code: error.code, attempt: context.attempt, retry_in_ms: retryInMs },
    decision.retry ? 'step attempt failed: will retry' : 'step failed for good',
  );
  try {
    await runStep(context, kind.announceFailure(context, data as never, error, retryInMs), parkJob);
  } catch (announceError) {
    context.logger.warn({ err: announceError }, 'could not record the failed attempt as an event');
  }
  if (decision.retry) throw new RetryAfter(error, decision.delayMs);
  await runStep(context, kind.fail(context, data as never, error), parkJob);
}
