import { RatchetError } from '../errors/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { cancelCommit } from '../workflows/core/run-commits.js';
import { sessionIdOfRun, stepJobId } from '../workflows/ids.js';
import { journalField, replyEntrySchema } from '../workflows/journal.js';
import type { QuestionRecord } from '../workflows/question-record.js';
import { isFinished, type RunRecord, withoutStaleWait } from '../workflows/run-record.js';
import type { RedisClient } from './connection.js';
import type { EngineContext } from './engine-context.js';
import { cancelChannel, type KeySpace, retentionKeys, runKeys, sessionKeys } from './keys.js';
import { pendingQuestions } from './question-store.js';
import { encodeEvent, loadRun } from './run-store.js';
import { runScript } from './scripts.js';

/**
 * Cancels a run: the finished status is written (every step checks it before it starts and when it commits)
 * and every worker is told to abort the run's in-flight model requests and tool handlers, in one script;
 * then the run's queued steps are removed.
 */
export async function cancelRun(context: EngineContext, runId: string, reason: string): Promise<void> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  const keys = runKeys(context.space, sessionId, runId);
  const session = sessionKeys(context.space, sessionId);
  const retention = retentionKeys(context.space, keys.shard);
  for (let tries = 0; tries < 10; tries += 1) {
    const stored = await loadRun(context.redis, keys, runId);
    if (!stored) throw new RatchetError('run_not_found', `unknown run ${runId}`);
    if (isFinished(stored.record.status)) {
      throw new RatchetError('run_finished', `run ${runId} is already ${stored.record.status}`, {
        details: { status: stored.record.status },
      });
    }
    const now = context.now().toISOString();
    const plan = cancelCommit(stored.record, reason, now);
    const closed = (await pendingQuestions(context.redis, context.space, sessionId))
      .filter((question) => question.run_id === runId)
      .map((question): QuestionRecord => ({ ...question, status: 'cancelled' }));
    const [code, detail] = await runScript(
      context.redis,
      'cancel-run',
      [
        keys.run,
        session.session,
        keys.events,
        session.questions,
        session.pending,
        retention.finishedRuns,
        retention.sessions,
        session.runIndex,
        keys.steers,
        session.queued,
        retention.queueStarts,
      ],
      [
        stored.rev,
        JSON.stringify(withoutStaleWait(plan.record)),
        runId,
        context.eventsMaxLength,
        cancelChannel(context.space),
        closed.length,
        ...closed.flatMap((question) => [question.id, JSON.stringify(question)]),
        ...plan.events.map(encodeEvent),
      ],
    );
    if (code === 'CONFLICT') continue;
    if (code === 'NO_RUN') throw new RatchetError('run_not_found', `unknown run ${runId}`);
    if (code === 'RUN_FINISHED')
      throw new RatchetError('run_finished', `run ${runId} is already ${detail}`, {
        details: { status: detail },
      });
    // This call's write finished the run (a second cancel gets RUN_FINISHED above): report it, once.
    context.runCancelled?.(plan.record);
    for (const question of closed) context.questionClosed?.(question, now);
    await afterCancel(context, stored.record);
    return;
  }
  throw new RatchetError('internal', `run ${runId} kept changing while it was cancelled`);
}

/**
 * What follows a run's cancelled record (cancel-run.lua, or interrupt-run.lua, which also told every worker
 * to abort its in-flight calls, so that abort does not depend on this process living on): its queued steps
 * are removed, its children cancelled and its parent woken.
 */
export async function afterCancel(context: EngineContext, run: RunRecord): Promise<void> {
  const keys = runKeys(context.space, run.session_id, run.id);
  await removeQueuedSteps(context, keys.shard, keys.journal, run.id, run.iteration);
  await cancelChildren(context, keys.children, run.id);
  await context.queues.wakeParent(run);
}

/** A cancelled run's children are cancelled with it (and theirs with them). */
async function cancelChildren(context: EngineContext, childrenKey: string, runId: string): Promise<void> {
  for (const childId of await context.redis.smembers(childrenKey)) {
    try {
      await cancelRun(context, childId, `its parent run ${runId} was cancelled`);
    } catch (error) {
      if (!(error instanceof RatchetError && ['run_finished', 'run_not_found'].includes(error.code)))
        throw error;
    }
  }
}

/** Removes the steps that may be queued for the run (locked ones finish as no-ops when they see the status). */
async function removeQueuedSteps(
  context: EngineContext,
  shard: number,
  journalKey: string,
  runId: string,
  iteration: number,
): Promise<void> {
  const queue = context.queues.queue(shard);
  const replyText =
    iteration > 0 ? await context.redis.hget(journalKey, journalField.reply(iteration)) : null;
  const calls = replyText ? parseJsonRecord(replyEntrySchema, replyText, 'reply entry').tool_calls.length : 0;
  const jobIds = [stepJobId.iteration(runId, iteration + 1)];
  if (iteration === 0) jobIds.push(stepJobId.iteration(runId, 1));
  for (let index = 0; index < calls; index += 1) jobIds.push(stepJobId.tool(runId, iteration, index));
  for (const jobId of jobIds) {
    try {
      await queue.remove(jobId, { removeChildren: true });
    } catch (error) {
      context.logger.debug({ err: error, job_id: jobId }, 'step not removed (running or gone)');
    }
  }
}

/**
 * Listens, on a connection of its own, to the cancellations every engine broadcasts (cancel-run.lua and
 * interrupt-run.lua publish the run id), and calls `onCancel` with each run id.
 */
export async function listenForCancellations(
  subscriber: RedisClient,
  space: KeySpace,
  onCancel: (runId: string) => void,
): Promise<void> {
  subscriber.on('message', (_channel: string, runId: string) => onCancel(runId));
  await subscriber.subscribe(cancelChannel(space));
}
