import type { Part } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import { buildEvent } from '../events/event.js';
import {
  acceptBusyMessage,
  cancelQueuedMessage as cancelStoredQueuedMessage,
  firstQueuedMessage,
  markedQueueStarts,
  settleQueueStart,
} from '../redis/busy-messages.js';
import { afterCancel } from '../redis/cancel-run.js';
import { mainChatId, sessionKeys } from '../redis/keys.js';
import { pendingQuestions } from '../redis/question-store.js';
import type { OnBusy } from '../schemas/index.js';
import {
  cancelCommit,
  crashPoint,
  isFinished,
  newPendingMessageId,
  newRunId,
  type PendingMessage,
  planRunCreation,
  type QuestionRecord,
  runIdOfPendingMessage,
} from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';
import { assertAgent, deadlineOf, isTeam, prefixOf } from './run-limits.js';
import { definitionOf, startRun } from './runs.js';

/**
 * A message sent to a session (POST /v1/sessions/:id/messages) and what it does when the session's run is
 * active, by its `on_busy` policy or its agent's `options.on_busy` (decision 0032).
 */

export interface SendMessageInput {
  sessionId: string;
  input: string | Part[];
  /** What to do when the session has an active run; the session agent's `options.on_busy` when omitted. */
  onBusy?: OnBusy;
  /**
   * The submission's idempotency key (decision 0035): a message that starts a run records it with the run, and
   * the same key again answers that run (`replayed`). A message queued, steered or interrupting keeps no key.
   */
  idempotencyKey?: string;
}

/**
 * What became of a message: it `started` a run; it was `queued` (`run_id`: the run it will start); it was
 * `steered` into the active run (`run_id`), to join its chat before the run's next model call (or, when the
 * run ends first, to be queued: a message_queued event says so); or it `interrupted` the active run
 * (`interrupted_run_id`) and started `run_id` in its place.
 */
export type SentMessage =
  | { delivery: 'started'; runId: string; sessionId: string; replayed?: boolean }
  | { delivery: 'queued' | 'steered'; runId: string; sessionId: string; messageId: string; position: number }
  | { delivery: 'interrupted'; runId: string; sessionId: string; interruptedRunId: string };

/** How often a send is tried again when the session's active run changed under it. */
const changeTries = 10;

/** The agents' defaults when the engine was built without the config's (`options.on_busy`, `max_queued_messages`). */
const defaultMaxQueued = 10;

export async function sendMessage(parts: EngineParts, input: SendMessageInput): Promise<SentMessage> {
  const { sessionId } = input;
  const session = await parts.store.sessionRecord(sessionId);
  if (!session) throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
  const agent = session.agent;
  const policy = input.onBusy ?? parts.options.onBusy?.[agent] ?? 'reject';
  if (policy === 'steer' && isTeam(parts.options, agent)) {
    throw new RatchetError(
      'steer_unsupported',
      `on_busy: steer: "${agent}" is a team, whose runs take no steered message; use on_busy: queue or interrupt`,
      { details: { field: 'on_busy' } },
    );
  }
  const inputParts: Part[] =
    typeof input.input === 'string' ? [{ type: 'text', text: input.input }] : input.input;
  for (let tries = 0; tries < changeTries; tries += 1) {
    const activeRunId =
      (await parts.redis.hget(sessionKeys(parts.space, sessionId).session, 'active_run')) ?? '';
    if (policy === 'reject') {
      const started = await startOrBusy(parts, sessionId, inputParts, policy, input.idempotencyKey);
      if (started) return started;
      continue;
    }
    if (policy === 'interrupt' && activeRunId !== '') {
      const interrupted = await interrupt(parts, sessionId, agent, activeRunId, inputParts);
      if (interrupted) return interrupted;
      continue;
    }
    // With no active run, a message of any policy but reject goes to the queue: it starts a run only when the
    // queue is empty (IDLE), else it waits behind the messages of a run that just ended (decision 0040).
    const mode = policy === 'steer' && activeRunId !== '' ? 'steer' : 'queue';
    const message: PendingMessage = {
      v: 1,
      id: newPendingMessageId(),
      parts: pendingParts(inputParts),
      sent_at: parts.now().toISOString(),
      ...(mode === 'steer' ? { steered_to: activeRunId } : {}),
    };
    const limit = parts.options.maxQueuedMessages?.[agent] ?? defaultMaxQueued;
    const accepted = await acceptBusyMessage(parts.redis, parts.space, {
      mode,
      sessionId,
      activeRunId,
      message,
      maxWaiting: limit,
      queuedEvent:
        mode === 'queue'
          ? buildEvent(
              'message_queued',
              { id: activeRunId || runIdOfPendingMessage(sessionId, message.id), agent },
              { message_id: message.id, reason: 'busy', position: -1 },
              message.sent_at,
            )
          : undefined,
      eventsMaxLength: parts.options.eventsMaxLength,
    });
    switch (accepted.code) {
      case 'OK':
        return {
          delivery: mode === 'queue' ? 'queued' : 'steered',
          runId: mode === 'queue' ? runIdOfPendingMessage(sessionId, message.id) : activeRunId,
          sessionId,
          messageId: message.id,
          position: accepted.position,
        };
      case 'IDLE': {
        const started = await startOrBusy(parts, sessionId, inputParts, policy, input.idempotencyKey);
        if (started) return started;
        continue;
      }
      case 'CHANGED':
        continue;
      case 'FULL':
        throw new RatchetError(
          'queue_full',
          `session ${sessionId} has ${accepted.count} messages waiting, as many as agent "${agent}" allows ` +
            `(options.max_queued_messages: ${limit}); wait for its runs, cancel a queued message, or raise ` +
            'options.max_queued_messages',
          { details: { limit, active_run_id: activeRunId || null } },
        );
    }
  }
  throw new RatchetError(
    'internal',
    `session ${sessionId}: its active run kept changing while a message was sent`,
  );
}

/** What a person may put in a message (text and images), as a waiting message keeps it. */
function pendingParts(parts: readonly Part[]): PendingMessage['parts'] {
  return parts.map((part) => {
    if (part.type === 'text' || part.type === 'image') return part;
    throw new RatchetError(
      'invalid_run_settings',
      `a message may hold text and images, not ${part.type} parts`,
      {
        details: { field: 'parts' },
      },
    );
  });
}

/** A run started by the message; undefined when the session turned out busy (the caller looks again). */
async function startOrBusy(
  parts: EngineParts,
  sessionId: string,
  input: Part[],
  policy: OnBusy,
  idempotencyKey: string | undefined,
): Promise<SentMessage | undefined> {
  try {
    const started = await startRun(parts, {
      input,
      sessionId,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    return { delivery: 'started', ...started };
  } catch (error) {
    if (policy !== 'reject' && error instanceof RatchetError && error.code === 'session_busy')
      return undefined;
    if (error instanceof RatchetError && error.code === 'session_busy') {
      throw new RatchetError(
        'session_busy',
        `${error.message}; send it with on_busy: queue, steer or interrupt to deliver it anyway`,
        {
          details: error.details ?? {},
        },
      );
    }
    throw error;
  }
}

/**
 * Cancels the session's active run and starts the message's in its place, in one write (interrupt-run.lua);
 * undefined when the active run changed meanwhile (the caller looks again).
 */
async function interrupt(
  parts: EngineParts,
  sessionId: string,
  agent: string,
  activeRunId: string,
  input: Part[],
): Promise<SentMessage | undefined> {
  const active = await parts.store.loadRun(sessionId, activeRunId);
  if (!active || isFinished(active.record.status)) return undefined;
  assertAgent(parts.options, agent);
  const now = parts.now();
  const runId = newRunId(sessionId);
  const cancelled = cancelCommit(
    active.record,
    `interrupted by a new message (run ${runId})`,
    now.toISOString(),
  );
  const closedQuestions = (await pendingQuestions(parts.redis, parts.space, sessionId))
    .filter((question) => question.run_id === activeRunId)
    .map((question): QuestionRecord => ({ ...question, status: 'cancelled' }));
  const chatLength = await parts.store.chatLength(sessionId, mainChatId);
  const deadlineAt = deadlineOf(parts.options, now, agent, undefined);
  const plan = planRunCreation({
    sessionId,
    runId,
    agent,
    chatId: mainChatId,
    parts: input,
    newSession: undefined,
    ...(deadlineAt ? { deadlineAt } : {}),
    prefix: prefixOf(parts.options, agent),
    team: isTeam(parts.options, agent),
    ...definitionOf(parts.options, agent),
    chatLength,
    now: now.toISOString(),
    tenant: active.record.tenant,
    priority: active.record.priority,
  });
  crashPoint('message.before_interrupt_commit');
  const { code, detail } = await parts.busyMessages().interrupt({
    cancelled: { record: cancelled.record, rev: active.rev, events: cancelled.events, closedQuestions },
    plan,
    chatLength,
  });
  if (code === 'CHANGED' || code === 'CONFLICT' || code === 'RUN_FINISHED' || code === 'NO_RUN')
    return undefined;
  if (code === 'NO_SESSION') throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
  if (code !== 'OK') throw new RatchetError('internal', `interrupt-run returned ${code} ${detail ?? ''}`);
  crashPoint('message.after_interrupt_commit');
  parts.context.runCancelled?.(cancelled.record);
  for (const question of closedQuestions) parts.context.questionClosed?.(question, now.toISOString());
  await afterCancel(parts.context, active.record);
  // The interrupted root run frees its admission slot (or its place in the queue) now, not at the next
  // sweep (decision 0048); a process that dies before this leaves it to the sweep.
  if (active.record.parent === null) await parts.admission?.release(active.record);
  return { delivery: 'interrupted', runId, sessionId, interruptedRunId: activeRunId };
}

/** Takes a queued message back (DELETE /v1/sessions/:id/queued/:message_id). */
export async function cancelQueuedMessage(
  parts: EngineParts,
  sessionId: string,
  messageId: string,
): Promise<void> {
  if (!(await parts.store.sessionRecord(sessionId)))
    throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
  if (!(await cancelStoredQueuedMessage(parts.redis, parts.space, sessionId, messageId))) {
    throw new RatchetError(
      'queued_message_not_found',
      `no queued message ${messageId} in session ${sessionId}: it started its run already, or was never queued`,
    );
  }
}

/**
 * Starts the next run of each session of the shard marked in its queue starts (a run ended with messages
 * queued), from its first queued message; takes the mark off the sessions with nothing to start. The run's
 * id derives from the message's, so two workers sweeping at once, or a sweep after a crash, start it once.
 * Returns how many runs it started.
 */
export async function startQueuedRuns(parts: EngineParts, shard: number, limit = 100): Promise<number> {
  let started = 0;
  for (const sessionId of await markedQueueStarts(parts.redis, parts.space, shard, limit)) {
    if (await startQueuedRun(parts, sessionId)) started += 1;
  }
  return started;
}

async function startQueuedRun(parts: EngineParts, sessionId: string): Promise<boolean> {
  for (let tries = 0; tries < changeTries; tries += 1) {
    const [session, first] = await Promise.all([
      parts.store.sessionRecord(sessionId),
      firstQueuedMessage(parts.redis, parts.space, sessionId),
    ]);
    if (!session || !first) {
      await settleQueueStart(parts.redis, parts.space, sessionId);
      return false;
    }
    const now = parts.now();
    const runId = runIdOfPendingMessage(sessionId, first.id);
    const chatLength = await parts.store.chatLength(sessionId, mainChatId);
    const deadlineAt = deadlineOf(parts.options, now, session.agent, undefined);
    const plan = planRunCreation({
      sessionId,
      runId,
      agent: session.agent,
      chatId: mainChatId,
      parts: first.parts,
      newSession: undefined,
      ...(deadlineAt ? { deadlineAt } : {}),
      prefix: prefixOf(parts.options, session.agent),
      team: isTeam(parts.options, session.agent),
      ...definitionOf(parts.options, session.agent),
      chatLength,
      now: now.toISOString(),
      tenant: session.tenant,
    });
    const { code } = await parts.busyMessages().startQueued({ messageId: first.id, plan, chatLength });
    if (code === 'OK') return true;
    if (code === 'SESSION_BUSY') {
      // Its active run's end marks it again; settle takes the mark off only while that holds.
      if (await settleQueueStart(parts.redis, parts.space, sessionId)) return false;
      continue;
    }
    if (code === 'RUN_EXISTS') {
      // The message started its run before (a write whose answer was lost): it must not wait in the queue.
      await cancelStoredQueuedMessage(parts.redis, parts.space, sessionId, first.id);
      continue;
    }
    if (code === 'NOT_FIRST' || code === 'CONFLICT') continue;
    if (code === 'NO_SESSION') return false;
    throw new RatchetError('internal', `start-queued-run returned ${code}`);
  }
  return false;
}
