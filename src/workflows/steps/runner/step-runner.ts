import { RatchetError } from '../../../errors/index.js';
import { type CommitPlan, runDurationMs } from '../../core/run-commits.js';
import { crashPoint } from '../../crash-points.js';
import { journalField } from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import type { NextStep, StepAction, StepCommit } from './step-action.js';
import type { CommitResult } from './step-commit.js';
import type { StepContext } from './step-context.js';

/** How a step's execution ended, for the worker: nothing more to do, or parked (moved to the delayed set). */
export type StepEnd = 'done' | 'parked';

/** The worker's side of parking: move the job to BullMQ's delayed set until `wakeAt`, holding no worker. */
export type ParkJob = (wakeAt: number) => Promise<void>;

/**
 * The one lifecycle of every step kind: the step decides, as data (StepAction), and this runner commits
 * (fenced by the job's lock token), checks that the worker still owns the job, adds the next steps, fires the
 * crash points the action names, parks, and hands each result back to the step for its next decision.
 */
export async function runStep(
  context: StepContext,
  first: Promise<StepAction>,
  parkJob: ParkJob,
): Promise<StepEnd> {
  let action = await first;
  for (;;) {
    switch (action.kind) {
      case 'done':
        return 'done';
      case 'park':
        // A step waits at most until its run's deadline, and then fails it.
        await parkStep(
          context,
          Math.min(action.wakeAt, context.deadlineMs ?? Number.POSITIVE_INFINITY),
          action.recheck,
          parkJob,
        );
        return 'parked';
      case 'commit': {
        if (action.before) crashPoint(action.before);
        const result = await write(context, action.commit);
        if (result.status === 'lock_lost') {
          throw new RatchetError(
            'lock_lost',
            `${action.what}: the job's lock was lost; another worker owns it now`,
          );
        }
        // The point after a commit is reached when the write took effect (or an earlier attempt's had).
        if (action.after && (result.status === 'ok' || result.status === 'done')) crashPoint(action.after);
        if (result.status === 'ok' && action.commit.op === 'run') {
          logRunEnd(context, action.commit.request.plan);
          await releaseAdmission(context, action.commit.request.plan);
        }
        action = await action.andThen(result as never);
        break;
      }
      case 'enqueue': {
        if (action.before) crashPoint(action.before);
        await addSteps(context, action.next);
        if (action.after) crashPoint(action.after);
        action = action.andThen ? await action.andThen() : { kind: 'done' };
        break;
      }
    }
  }
}

/** A commit that finished a run says so in the logs: its status and how long it took. */
function logRunEnd(context: StepContext, plan: CommitPlan<unknown>): void {
  const { record } = plan;
  if (!plan.finished || !record) return;
  context.services.observer?.runEnded(record);
  const duration = runDurationMs(record, record.finished_at ?? context.services.now().toISOString());
  context.logger.info(
    { run_id: record.id, agent: record.agent, status: record.status, duration_ms: duration },
    'agent run ended',
  );
}

/**
 * A root run that ended frees its admission slot, and the runs admitted into it are woken (decision 0038).
 * A crash before this leaves the slot to the admission sweep; a failure to release is logged, never fails
 * the step whose commit is done.
 */
async function releaseAdmission(context: StepContext, plan: CommitPlan<unknown>): Promise<void> {
  const { record } = plan;
  const admission = context.services.admission;
  if (!admission || !plan.finished || !record || record.parent !== null) return;
  await admission
    .release(record)
    .catch((error: unknown) =>
      context.logger.warn(
        { err: error, run_id: record.id },
        'admission slot not released: the sweep frees it',
      ),
    );
}

/** The first step of a run says so in the logs (again if that step runs again). */
export function logRunStart(context: StepContext, record: RunRecord): void {
  if (record.status !== 'queued') return;
  // Counted by the first execution of the first step only: a park (a rate limit) or a takeover starts it again.
  if (context.started === 1) context.services.observer?.runStarted(record);
  context.logger.info({ run_id: record.id, agent: record.agent }, 'agent run started');
}

function write(context: StepContext, commit: StepCommit): Promise<CommitResult | { status: string }> {
  switch (commit.op) {
    case 'run':
      return context.store.commit(commit.request);
    case 'begin_tool':
      return context.store.beginToolCall(commit.request);
    case 'tool_outcome':
      return context.store.commitToolOutcome(commit.request);
    case 'steer':
      return context.store.commitSteers(commit.request);
  }
}

async function addSteps(context: StepContext, next: readonly NextStep[]): Promise<void> {
  const { scheduler } = context.services;
  for (const step of next) {
    switch (step.kind) {
      case 'iteration':
        await scheduler.addIteration(step.data);
        break;
      case 'tools':
        await scheduler.addToolCalls(step.calls);
        break;
      case 'team_turn':
        await scheduler.addTeamTurn(step.data);
        break;
      case 'wake_parent':
        await scheduler.wakeParent(step.run);
        break;
    }
  }
}

/**
 * A step that waits (for an answer, child runs, a state key, a rate limit) is parked in BullMQ's delayed set:
 * no attempt spent, no worker held, woken by what it waits for or at `wakeAt`. It is marked in the journal
 * first (fenced), so its next execution is known for a wake-up rather than the rerun of a step a crash cut
 * short. The recheck then closes the gap of what it waits for having come while it was still running.
 */
async function parkStep(
  context: StepContext,
  wakeAt: number,
  recheck: (() => Promise<boolean>) | undefined,
  parkJob: ParkJob,
): Promise<void> {
  const marked = await context.store.markParked(journalField.parked(context.jobId), wakeAt);
  if (!marked) throw new RatchetError('lock_lost', 'lost the job lock while parking the step');
  await parkJob(wakeAt);
  if (recheck && (await recheck().catch(() => false))) {
    await context.services.scheduler.wake(context.sessionId, context.jobId);
  }
}
