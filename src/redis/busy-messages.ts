import { encodeChatEntry } from '../chat/index.js';
import type { StoredEvent } from '../events/event.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { RunCreation } from '../workflows/core/run-creation.js';
import { stepJobId } from '../workflows/ids.js';
import { type PendingMessage, pendingMessageSchema } from '../workflows/pending-message.js';
import type { QuestionRecord } from '../workflows/question-record.js';
import type { RunRecord } from '../workflows/run-record.js';
import { CheckedWriter, type RunWriterOptions } from './checked-writer.js';
import type { RedisClient } from './connection.js';
import { DefinitionStore } from './definition-store.js';
import { cancelChannel, chatKey, type KeySpace, retentionKeys, runKeys, sessionKeys } from './keys.js';
import { encodeEvent } from './run-store.js';
import { runScript } from './scripts.js';

/**
 * The writes of messages sent to a busy session (decision 0032): accepting one (queued or steered), taking a
 * queued one back, starting the session's next run from its queue, and interrupting its active run with a
 * new one. Starting and interrupting add a run's first step: checked writes (checked-writer.ts), on
 * connections of their own opened on first use.
 */

export type BusyAcceptance =
  | { code: 'OK'; position: number }
  | { code: 'IDLE' }
  | { code: 'CHANGED'; activeRunId: string }
  | { code: 'FULL'; count: number };

/** Accepts a message to a busy session: into its queue, or into the active run's steered messages. */
export async function acceptBusyMessage(
  redis: RedisClient,
  space: KeySpace,
  input: {
    mode: 'queue' | 'steer';
    sessionId: string;
    activeRunId: string;
    message: PendingMessage;
    maxWaiting: number;
    /** The message_queued event, its position -1 (the script fills it in). */
    queuedEvent: StoredEvent | undefined;
    eventsMaxLength: number;
  },
): Promise<BusyAcceptance> {
  const session = sessionKeys(space, input.sessionId);
  // A session with no active run names no run: its steered list is a key no run has.
  const steers = runKeys(space, input.sessionId, input.activeRunId || 'none').steers;
  const [code, detail] = await runScript(
    redis,
    'send-busy-message',
    [
      session.session,
      session.queued,
      steers,
      session.events,
      retentionKeys(space, session.shard).queueStarts,
    ],
    [
      input.mode,
      input.activeRunId,
      JSON.stringify(input.message),
      input.maxWaiting,
      input.queuedEvent ? encodeEvent(input.queuedEvent) : '',
      input.eventsMaxLength,
    ],
  );
  switch (code) {
    case 'OK':
      return { code, position: Number(detail) };
    case 'IDLE':
      return { code };
    case 'CHANGED':
      return { code, activeRunId: detail ?? '' };
    case 'FULL':
      return { code, count: Number(detail) };
    default:
      throw new Error(`send-busy-message returned ${code}`);
  }
}

/** Takes a queued message out of its session's queue; false when it is not there (started, or never queued). */
export async function cancelQueuedMessage(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  messageId: string,
): Promise<boolean> {
  const [code] = await runScript(redis, 'cancel-queued', [sessionKeys(space, sessionId).queued], [messageId]);
  return code === 'OK';
}

/** The session's first queued message, if any. */
export async function firstQueuedMessage(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
): Promise<PendingMessage | undefined> {
  const entry = await redis.lindex(sessionKeys(space, sessionId).queued, 0);
  return entry === null
    ? undefined
    : parseJsonRecord(pendingMessageSchema, entry, `first queued message of session ${sessionId}`);
}

/** Sessions of a shard marked to start their next run from their queue, oldest mark first. */
export async function markedQueueStarts(
  redis: RedisClient,
  space: KeySpace,
  shard: number,
  limit: number,
): Promise<string[]> {
  const members = await redis.zrange(retentionKeys(space, shard).queueStarts, 0, limit - 1);
  return members.map((member) => member.slice(member.lastIndexOf(':session:') + ':session:'.length));
}

/** Takes the session's mark off when nothing is to start (settle-queue-start.lua); true when it was. */
export async function settleQueueStart(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
): Promise<boolean> {
  const session = sessionKeys(space, sessionId);
  const outcome = (await runScript(
    redis,
    'settle-queue-start',
    [session.session, session.queued, retentionKeys(space, session.shard).queueStarts],
    [],
  )) as unknown as string;
  return outcome === 'SETTLED';
}

/** What interrupting a session's active run writes: its cancellation, and the new run with its input. */
export interface Interruption {
  cancelled: { record: RunRecord; rev: number; events: StoredEvent[]; closedQuestions: QuestionRecord[] };
  plan: RunCreation;
  chatLength: number;
}

export class BusyMessageWriter {
  private readonly writer: CheckedWriter;

  private readonly definitions: DefinitionStore;

  constructor(private readonly options: RunWriterOptions) {
    this.writer = new CheckedWriter({ ...options, name: 'ratchet-busy-messages', maxConcurrent: 2 });
    this.definitions = new DefinitionStore(options.redis, options.space);
  }

  /** Starts the run of the session's first queued message (start-queued-run.lua) with its first step. */
  async startQueued(input: { messageId: string; plan: RunCreation; chatLength: number }) {
    const { plan } = input;
    // First, idempotently: a run names only a definition that is recorded (decision 0030).
    if (plan.definition) await this.definitions.record(plan.definition);
    const { record } = plan;
    const keys = runKeys(this.options.space, record.session_id, record.id);
    const chat = chatKey(this.options.space, record.session_id, record.chat_id);
    const retention = retentionKeys(this.options.space, keys.shard);
    return this.writer.write({
      watch: [keys.session, chat, keys.run, keys.queued],
      script: 'start-queued-run',
      refusable: true,
      keys: [
        keys.session,
        chat,
        keys.events,
        keys.run,
        keys.runs,
        retention.sessions,
        keys.runIndex,
        keys.queued,
        retention.queueStarts,
      ],
      args: (mode) => [
        mode,
        input.messageId,
        record.id,
        JSON.stringify(record),
        input.chatLength,
        this.options.eventsMaxLength,
        ...(mode === 'check'
          ? [0]
          : [plan.messages.length, ...plan.messages.map(encodeChatEntry), ...plan.events.map(encodeEvent)]),
      ],
      step: {
        shard: keys.shard,
        kind: plan.first.kind,
        data: plan.first.data,
        jobId: stepJobId.iteration(record.id, 1),
      },
    });
  }

  /** Cancels the session's active run and starts the new one, in one write (interrupt-run.lua). */
  async interrupt(input: Interruption) {
    const { plan, cancelled } = input;
    if (plan.definition) await this.definitions.record(plan.definition);
    const { record } = plan;
    const space = this.options.space;
    const active = runKeys(space, record.session_id, cancelled.record.id);
    const keys = runKeys(space, record.session_id, record.id);
    const chat = chatKey(space, record.session_id, record.chat_id);
    const retention = retentionKeys(space, keys.shard);
    return this.writer.write({
      watch: [keys.session, chat, active.run, keys.run, keys.pending],
      script: 'interrupt-run',
      refusable: true,
      keys: [
        keys.session,
        chat,
        keys.events,
        active.run,
        keys.runs,
        keys.questions,
        keys.pending,
        retention.finishedRuns,
        retention.sessions,
        keys.runIndex,
        keys.run,
        active.steers,
        keys.queued,
        retention.queueStarts,
      ],
      args: (mode) => [
        mode,
        cancelled.record.id,
        cancelled.rev,
        JSON.stringify(cancelled.record),
        record.id,
        JSON.stringify(record),
        input.chatLength,
        this.options.eventsMaxLength,
        cancelChannel(space),
        cancelled.closedQuestions.length,
        ...cancelled.closedQuestions.flatMap((question) => [question.id, JSON.stringify(question)]),
        cancelled.events.length,
        ...cancelled.events.map(encodeEvent),
        ...(mode === 'check'
          ? [0]
          : [plan.messages.length, ...plan.messages.map(encodeChatEntry), ...plan.events.map(encodeEvent)]),
      ],
      step: {
        shard: keys.shard,
        kind: plan.first.kind,
        data: plan.first.data,
        jobId: stepJobId.iteration(record.id, 1),
      },
    });
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
