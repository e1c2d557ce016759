import { z } from 'zod';
import { buildEvent } from '../events/event.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { capabilityLimits } from '../workflows/core/step-needs.js';
import { isFinished, type RunRecord, type RunStatus, runStatusSchema } from '../workflows/run-record.js';
import type { RedisClient } from './connection.js';
import { jobLockKey, type KeySpace, runKeys } from './keys.js';
import { encodeEvent, parseRun } from './run-store.js';
import { runScript } from './scripts.js';

/**
 * Steps handed back because their worker lacked code they need (decision 0031), kept where every worker
 * looks: a hash beside the worker registry (`{workers}` hash tag), job id → the step's place and what it
 * needs. A worker that serves those names wakes the step and ends its run's wait (worker-found.lua); the
 * first worker that handed it back set `since`, from which `worker.capability_wait_s` is counted. One
 * entry per step handed back (bounded by the unfinished steps), each at most 50 names.
 */
const waitingStepSchema = z.strictObject({
  v: z.literal(1),
  session_id: z.string(),
  run_id: z.string(),
  shard: z.number().int().nonnegative(),
  missing: z.array(z.string()).max(capabilityLimits.maxMissingNames),
  /** When a worker first handed the step back for these names (ms since the epoch). */
  since: z.number().int().nonnegative(),
});
export type WaitingStep = z.infer<typeof waitingStepSchema> & { job_id: string };

/** The marker wait-for-worker.lua leaves in the run hash: the status to go back to. */
const markerSchema = z.strictObject({
  v: z.literal(1),
  job_id: z.string(),
  previous: runStatusSchema,
  missing: z.array(z.string()),
});

defineRecordKind({ name: 'worker.waiting-step', version: 1, schema: waitingStepSchema });
defineRecordKind({ name: 'run.worker-wait-marker', version: 1, schema: markerSchema });

function waitingStepsKey(space: KeySpace): string {
  return `${space.prefix}:{workers}:waiting-steps`;
}

/**
 * Notes a step handed back for `missing` (kept as the first worker wrote it) and returns the entry as
 * stored: its `since` is the first hand-back's.
 */
export async function noteWaitingStep(
  redis: RedisClient,
  space: KeySpace,
  step: Omit<WaitingStep, 'v'>,
  /** 'again': written whether or not it is there (after a mark: the entry a capable worker must find). */
  mode: 'first' | 'again' = 'first',
): Promise<WaitingStep> {
  const key = waitingStepsKey(space);
  const { job_id: jobId, ...fields } = step;
  const entry = JSON.stringify({ v: 1, ...fields });
  const write = redis.multi();
  if (mode === 'first') write.hsetnx(key, jobId, entry);
  else write.hset(key, jobId, entry);
  const replies = await write.hget(key, jobId).exec();
  const stored = replies?.[1]?.[1];
  if (typeof stored !== 'string') return { v: 1, ...step };
  return { ...parseJsonRecord(waitingStepSchema, stored, `waiting step ${jobId}`), job_id: jobId };
}

/** Up to `count` waiting steps from `cursor` on (HSCAN): a worker reads a bounded page per look. */
export async function waitingSteps(
  redis: RedisClient,
  space: KeySpace,
  cursor: string,
  count = 500,
): Promise<{ cursor: string; steps: WaitingStep[] }> {
  const [next, flat] = await redis.hscan(waitingStepsKey(space), cursor, 'COUNT', count);
  const steps: WaitingStep[] = [];
  for (let index = 0; index + 1 < flat.length; index += 2) {
    const jobId = flat[index] as string;
    steps.push({
      ...parseJsonRecord(waitingStepSchema, flat[index + 1] as string, `waiting step ${jobId}`),
      job_id: jobId,
    });
  }
  return { cursor: next, steps };
}

/**
 * Of these waiting steps, those whose run is gone or finished (cancelled while it waited: its steps were
 * removed, so nothing hands them back again): one pipelined read of their runs' records.
 */
export async function stepsOfEndedRuns(
  redis: RedisClient,
  space: KeySpace,
  steps: readonly WaitingStep[],
): Promise<WaitingStep[]> {
  if (steps.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const step of steps) pipeline.hget(runKeys(space, step.session_id, step.run_id).run, 'record');
  const replies = (await pipeline.exec()) ?? [];
  return steps.filter((step, index) => {
    const record = replies[index]?.[1];
    if (typeof record !== 'string') return true;
    const { record: run } = parseRun(record, null, `run ${step.run_id}`);
    return isFinished(run.status);
  });
}

/** Whether the run's wait for a worker is open (wait-for-worker.lua's marker is in its hash). */
export async function isWaitingForWorker(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
): Promise<boolean> {
  return (await redis.hexists(runKeys(space, sessionId, runId).run, 'waiting_for_worker')) === 1;
}

export async function forgetWaitingStep(redis: RedisClient, space: KeySpace, jobId: string): Promise<void> {
  await redis.hdel(waitingStepsKey(space), jobId);
}

export type MarkOutcome = 'marked' | 'already' | 'lock_lost' | 'finished';

/**
 * Records that the run waits for a worker (wait-for-worker.lua), fenced by the step's lock token: the run's
 * status becomes waiting_for_worker with what is missing, and a waiting_for_worker event is added, once.
 */
export async function markWaitingForWorker(
  redis: RedisClient,
  space: KeySpace,
  input: {
    sessionId: string;
    runId: string;
    jobId: string;
    lockToken: string;
    missing: readonly string[];
    since: string;
    now: string;
    eventsMaxLength: number;
  },
): Promise<MarkOutcome> {
  const keys = runKeys(space, input.sessionId, input.runId);
  const missing = input.missing.slice(0, capabilityLimits.maxMissingNames);
  for (let tries = 0; tries < 5; tries += 1) {
    const [json, rev] = await redis.hmget(keys.run, 'record', 'rev');
    if (!json) return 'finished';
    const { record } = parseRun(json, rev ?? null, `run ${input.runId}`);
    if (record.status === 'waiting_for_worker') return 'already';
    const waiting: RunRecord = {
      ...record,
      status: 'waiting_for_worker',
      waiting_for: { since: input.since, missing },
      updated_at: input.now,
    };
    const event = buildEvent('waiting_for_worker', record, { missing, since: input.since }, input.now);
    const marker = { v: 1, job_id: input.jobId, previous: record.status, missing };
    const [code] = await runScript(
      redis,
      'wait-for-worker',
      [jobLockKey(space, keys.shard, input.jobId), keys.run, keys.events, keys.runIndex],
      [
        input.lockToken,
        rev ?? '0',
        JSON.stringify(waiting),
        input.runId,
        input.eventsMaxLength,
        encodeEvent(event),
        JSON.stringify(marker),
      ],
    );
    if (code === 'OK') return 'marked';
    if (code === 'MARKED') return 'already';
    if (code === 'LOCK_LOST') return 'lock_lost';
    if (code === 'NO_RUN' || code === 'RUN_FINISHED') return 'finished';
  }
  // The record kept changing under us (a step of another branch committing): the next hand-back tries again.
  return 'already';
}

export type ResumeOutcome = 'resumed' | 'not_waiting' | 'finished' | 'conflict';

/**
 * Ends the run's wait for a worker (worker-found.lua), once: the status it had before, without
 * `waiting_for`, and a worker_found event naming this worker.
 */
export async function resumeWaitingRun(
  redis: RedisClient,
  space: KeySpace,
  input: { sessionId: string; runId: string; workerId: string; now: string; eventsMaxLength: number },
): Promise<ResumeOutcome> {
  const keys = runKeys(space, input.sessionId, input.runId);
  for (let tries = 0; tries < 5; tries += 1) {
    const [json, rev, markerJson] = await redis.hmget(keys.run, 'record', 'rev', 'waiting_for_worker');
    if (!markerJson) return 'not_waiting';
    if (!json) return 'finished';
    const { record } = parseRun(json, rev ?? null, `run ${input.runId}`);
    const marker = parseJsonRecord(markerSchema, markerJson, `waiting marker of run ${input.runId}`);
    const { waiting_for: waitingFor, ...rest } = record;
    const status: RunStatus = record.status === 'waiting_for_worker' ? marker.previous : record.status;
    const resumed: RunRecord = { ...rest, status, updated_at: input.now };
    const event = buildEvent(
      'worker_found',
      record,
      { missing: waitingFor?.missing ?? marker.missing, worker_id: input.workerId },
      input.now,
    );
    const [code] = await runScript(
      redis,
      'worker-found',
      [keys.run, keys.events, keys.runIndex],
      [rev ?? '0', JSON.stringify(resumed), input.runId, input.eventsMaxLength, encodeEvent(event)],
    );
    if (code === 'OK') return 'resumed';
    if (code === 'NOT_WAITING') return 'not_waiting';
    if (code === 'NO_RUN' || code === 'RUN_FINISHED') return 'finished';
  }
  return 'conflict';
}
