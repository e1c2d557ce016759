import { contextViewSchema, type Part, toolCallsOf } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import type { ContinuationStore } from '../redis/continuation-store.js';
import { type KeySpace, mainChatId, shardOf } from '../redis/keys.js';
import { parseJsonRecord } from '../schemas/parse.js';
import {
  type Budget,
  type ContinuationLimits,
  continuationOf,
  crashPoint,
  forkLength,
  newRunId,
  newSessionId,
  planFork,
  planRetry,
  type RunRecord,
  recorderOf,
  retryRefusal,
  sessionIdOfRun,
} from '../workflows/index.js';
import { sessionBusyError } from './session-busy.js';

/** New limits a retry or a fork may ask for: each at most what its agent allows. */
export interface SteerLimits {
  budget?: Budget;
  timeoutS?: number;
  maxIterations?: number;
}

export interface ForkInput extends SteerLimits {
  atIteration: number;
  input?: string | Part[];
  agent?: string;
  metadata?: Record<string, unknown>;
}

/** What retry and fork need of the engine: its store, its clock and its checks of an agent's limits. */
export interface SteerContext {
  store: ContinuationStore;
  space: KeySpace;
  now: () => Date;
  /** Refuses an unknown agent, and limits above the agent's; returns the run's deadline. */
  limitsOf: (agent: string, limits: SteerLimits) => ContinuationLimits;
  isTeam: (agent: string) => boolean;
  prefixOf: (agent: string) => string;
}

/** How many times a write refused as CONFLICT (something changed since it was read) is planned again. */
const conflictTries = 5;

/**
 * Retries a failed or cancelled root run (POST /v1/runs/:id/retry): a new run continues it on the same
 * session from its last recorded iteration (decision 0022). Returns the new run's id.
 */
export async function retryRun(context: SteerContext, runId: string, limits: SteerLimits): Promise<string> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  for (let tries = 0; tries < conflictTries; tries += 1) {
    const stored = await context.store.loadRun(sessionId, runId);
    if (!stored) throw new RatchetError('run_not_found', `unknown run ${runId}`);
    const { record } = stored;
    const refusal = retryRefusal(record, context.isTeam(record.agent));
    if (refusal) {
      throw new RatchetError('run_not_retryable', refusal, {
        details: { status: record.status, retry_run_id: record.retried_by },
      });
    }
    const askedLimits = context.limitsOf(record.agent, {
      ...limits,
      ...(limits.maxIterations === undefined && record.max_iterations !== null
        ? { maxIterations: record.max_iterations }
        : {}),
    });
    const point = await context.store.retryPoint(record);
    await assertLatest(
      context,
      record.id,
      record.session_id,
      continuationOf(record)?.input_run_id ?? record.id,
    );
    const plan = planRetry({
      retried: record,
      point,
      runId: newRunId(sessionId),
      limits: askedLimits,
      now: context.now().toISOString(),
    });
    crashPoint('steer.before_retry_commit');
    const { code, detail } = await context.store.writeRetry(plan, {
      rev: stored.rev,
      chatLength: point.chatLength,
    });
    if (code === 'OK') {
      crashPoint('steer.after_retry_commit');
      return plan.record.id;
    }
    if (code === 'CONFLICT') continue;
    if (code === 'NO_RUN') throw new RatchetError('run_not_found', `unknown run ${runId}`);
    if (code === 'SESSION_BUSY' || code === 'QUEUE_WAITING') throw sessionBusyError(sessionId, code, detail);
    throw new RatchetError('internal', `retry-run returned ${code}`);
  }
  throw new RatchetError('internal', `could not retry run ${runId}: it kept changing`);
}

/**
 * A run is retried only while nothing came after it in its chat: the chat's last entry is its own, or that
 * of a run it continues (a retry appends nothing before its first reply). Another run's entries after it
 * mean the session moved on, and continuing the old run would answer a question nobody asks any more.
 */
async function assertLatest(
  context: SteerContext,
  runId: string,
  sessionId: string,
  inputRunId: string,
): Promise<void> {
  const length = await context.store.chatLength(sessionId, mainChatId);
  if (length === 0) return;
  const [last] = await context.store.readChat(sessionId, mainChatId, length - 1, length - 1);
  const owners = [runId, inputRunId];
  let current = await context.store.loadRun(sessionId, runId);
  // A chain of retries: each continues the one before; their entries count as the run's own.
  for (let hops = 0; current?.record.origin?.kind === 'retry' && hops < 100; hops += 1) {
    owners.push(current.record.origin.run_id);
    current = await context.store.loadRun(sessionId, current.record.origin.run_id);
  }
  if (last && !owners.some((owner) => last.id.startsWith(`${owner}-`))) {
    throw new RatchetError(
      'run_not_retryable',
      `run ${runId} is not the latest in session ${sessionId}: another run wrote to its chat since (${last.id}); start a new run instead`,
      { details: { status: current?.record.status ?? null } },
    );
  }
}

/**
 * Forks a root run at an iteration (POST /v1/runs/:id/fork): a new session whose chat is a copy of the
 * original's up to that iteration's recorded reply (and its tool results), and a new run that continues
 * from there (decision 0022). Returns the new run's and session's ids.
 */
export async function forkRun(
  context: SteerContext,
  runId: string,
  input: ForkInput,
): Promise<{ runId: string; sessionId: string }> {
  const originalSession = sessionIdOfRun(runId);
  if (!originalSession) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  const asked = await context.store.loadRun(originalSession, runId);
  if (!asked) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  if (
    asked.record.parent !== null ||
    asked.record.chat_id !== mainChatId ||
    context.isTeam(asked.record.agent)
  ) {
    throw new RatchetError(
      'run_not_forkable',
      `run ${runId} is ${asked.record.parent ? 'a child run' : "a team's run"}: only a root agent run can be forked`,
      { details: { status: asked.record.status } },
    );
  }
  const at = input.atIteration;
  // A retry's first iterations were recorded by the runs it continues: the fork starts from the reply, and
  // the results, of the run that recorded the iteration.
  const original = recorderOf(await retryChain(context, asked.record), at);
  const reply =
    at >= 1 && at <= original.iteration
      ? await context.store.reply(originalSession, original.id, at)
      : undefined;
  if (!reply) {
    throw new RatchetError(
      'invalid_run_settings',
      `at_iteration: run ${runId} has no recorded reply of iteration ${at} (its recorded iterations are 1 to ${asked.record.iteration})`,
      { details: { field: 'at_iteration', limit: asked.record.iteration } },
    );
  }
  const agent = input.agent ?? original.agent;
  if (context.isTeam(agent)) {
    throw new RatchetError(
      'run_not_forkable',
      `agent: "${agent}" is a team; a fork continues with an agent`,
      {
        details: { status: original.status },
      },
    );
  }
  const limits = context.limitsOf(agent, input);
  const [replyMessage] = await context.store.readChat(originalSession, mainChatId, reply.index, reply.index);
  // The reply, then its guardrail feedback (if any) and one result per call.
  const calls = replyMessage ? toolCallsOf(replyMessage).length : 0;
  const after = await context.store.readChat(
    originalSession,
    mainChatId,
    reply.index,
    reply.index + calls + 1,
  );
  const copied = forkLength(original, at, reply, after);
  const viewJson = await context.store.readView(originalSession, mainChatId);
  const view =
    viewJson === null
      ? null
      : parseJsonRecord(contextViewSchema, viewJson, `context view of ${originalSession}`);
  // A summary of more than the copy would hide the copy's end from the fork's model: the fork goes without.
  const keptView = view?.summary && view.summary.up_to <= copied ? viewJson : null;
  const sessionId = sessionOnShard(context.space, shardOf(context.space, originalSession));
  const parts: Part[] | undefined =
    input.input === undefined
      ? undefined
      : typeof input.input === 'string'
        ? [{ type: 'text', text: input.input }]
        : input.input;
  const plan = planFork({
    original,
    at,
    copied,
    sessionId,
    runId: newRunId(sessionId),
    agent,
    prefix: context.prefixOf(agent),
    parts,
    limits,
    metadata: input.metadata ?? {},
    now: context.now().toISOString(),
  });
  if (limits.definition && plan.record.definition?.hash === limits.definition.hash)
    await context.store.recordDefinition(limits.definition);
  crashPoint('steer.before_fork_commit');
  const { code } = await context.store.writeFork(plan, keptView);
  if (code !== 'OK') throw new RatchetError('internal', `fork-run returned ${code}`);
  crashPoint('steer.after_fork_commit');
  return { runId: plan.record.id, sessionId };
}

/** The run asked for and the runs it continues, as a chain of retries (each the one the run before retried). */
async function retryChain(context: SteerContext, asked: RunRecord): Promise<RunRecord[]> {
  const chain = [asked];
  let current = asked;
  for (let hops = 0; current.origin?.kind === 'retry' && hops < 100; hops += 1) {
    const retried = await context.store.loadRun(current.session_id, current.origin.run_id);
    if (!retried) break;
    chain.push(retried.record);
    current = retried.record;
  }
  return chain;
}

/**
 * A new session id on the given shard: a fork's session shares its original's shard, so the copy of the
 * chat and the fork's announcement in the original's log are one atomic write on one slot.
 */
function sessionOnShard(space: KeySpace, shard: number): string {
  for (;;) {
    const sessionId = newSessionId();
    if (shardOf(space, sessionId) === shard) return sessionId;
  }
}
