import { decodeChatEntry, encodeChatEntry, type Message, toolCallsOf } from '../chat/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { ForkPlan, RetryPlan, RetryPoint, RunContinuation } from '../workflows/core/run-continuation.js';
import type { DefinitionToRecord } from '../workflows/core/run-creation.js';
import { stepJobId } from '../workflows/ids.js';
import { journalField, type ReplyEntry, replyEntrySchema } from '../workflows/journal.js';
import { continuationOf, type StoredRun } from '../workflows/run-record.js';
import { CheckedWriter, type RunWriterOptions } from './checked-writer.js';
import { DefinitionStore } from './definition-store.js';
import { chatKey, chatViewKey, retentionKeys, runKeys, sessionKeys } from './keys.js';
import { encodeEvent, loadRun, readChat } from './run-store.js';

export type ContinuationWriteCode =
  | 'OK'
  | 'NO_RUN'
  | 'CONFLICT'
  | 'RUN_EXISTS'
  | 'SESSION_BUSY'
  | 'QUEUE_WAITING';

/**
 * Reads what a retry or a fork continues from, and writes the continuing run with its first step
 * (decision 0022). Like RunWriter (decision 0015): the script runs first as a check under WATCH, and the
 * MULTI of the script and the step's add is sent only when it said OK, so a refused retry or fork adds no
 * step (checked-writer.ts).
 */
export class ContinuationStore {
  private readonly writer: CheckedWriter;

  constructor(private readonly options: RunWriterOptions) {
    // Retries and forks are rare: two connections at most.
    this.writer = new CheckedWriter({ ...options, name: 'ratchet-continuations', maxConcurrent: 2 });
  }

  /** Records a definition a continuing run names (decision 0030), before the run is written. */
  recordDefinition(definition: DefinitionToRecord): Promise<void> {
    return new DefinitionStore(this.options.redis, this.options.space).record(definition);
  }

  loadRun(sessionId: string, runId: string): Promise<StoredRun | undefined> {
    return loadRun(this.options.redis, runKeys(this.options.space, sessionId, runId), runId);
  }

  /** A run's recorded reply of iteration n, if any. */
  async reply(sessionId: string, runId: string, iteration: number): Promise<ReplyEntry | undefined> {
    const keys = runKeys(this.options.space, sessionId, runId);
    const json = await this.options.redis.hget(keys.journal, journalField.reply(iteration));
    return json === null
      ? undefined
      : parseJsonRecord(replyEntrySchema, json, `journal ${journalField.reply(iteration)} of ${runId}`);
  }

  /** Where a finished run stopped: its last reply, whether its results are in the chat, those recorded. */
  async retryPoint(run: StoredRun['record']): Promise<RetryPoint> {
    const { redis, space } = this.options;
    const keys = runKeys(space, run.session_id, run.id);
    const chatLength = await redis.llen(chatKey(space, run.session_id, run.chat_id));
    const lastReply = run.iteration > 0 ? await this.reply(run.session_id, run.id, run.iteration) : undefined;
    const [message] = lastReply
      ? await readChat(redis, chatKey(space, run.session_id, run.chat_id), lastReply.index, lastReply.index)
      : [];
    const replyCalls = message ? toolCallsOf(message).map(({ id, name }) => ({ id, name })) : [];
    if (replyCalls.length === 0) {
      return {
        lastReply,
        calls: [],
        resultsAppended: true,
        recordedResults: [],
        startedCalls: [],
        chatLength,
      };
    }
    const calls = replyCalls.map((_call, index) => journalField.toolEntry(run.iteration, index));
    const intents = replyCalls.map((_call, index) => journalField.toolIntent(run.iteration, index));
    const [appended, ...fields] = await redis.hmget(
      keys.journal,
      journalField.results(run.iteration),
      ...calls,
      ...intents,
    );
    const entries = fields.slice(0, calls.length);
    return {
      lastReply,
      calls: replyCalls,
      resultsAppended: appended !== null,
      recordedResults: entries.map((entry, index) =>
        entry === null ? undefined : decodeChatEntry(entry, `journal ${calls[index]} of ${run.id}`),
      ),
      startedCalls: fields.slice(calls.length).map((intent) => intent !== null),
      chatLength,
    };
  }

  chatLength(sessionId: string, chatId: string): Promise<number> {
    return this.options.redis.llen(chatKey(this.options.space, sessionId, chatId));
  }

  readChat(sessionId: string, chatId: string, from: number, to: number): Promise<Message[]> {
    return readChat(this.options.redis, chatKey(this.options.space, sessionId, chatId), from, to);
  }

  /** The chat's context view as stored (null: none). */
  readView(sessionId: string, chatId: string): Promise<string | null> {
    return this.options.redis.get(chatViewKey(chatKey(this.options.space, sessionId, chatId)));
  }

  /** Writes a retry and adds its first step, unless retry-run refuses. */
  writeRetry(
    plan: RetryPlan,
    expected: { rev: number; chatLength: number },
  ): Promise<{ code: ContinuationWriteCode; detail: string | undefined }> {
    const { space, eventsMaxLength } = this.options;
    const { record, retried } = plan;
    const old = runKeys(space, retried.session_id, retried.id);
    const keys = runKeys(space, record.session_id, record.id);
    const chat = chatKey(space, record.session_id, record.chat_id);
    return this.checkedWrite({
      script: 'retry-run',
      watch: [keys.session, chat, old.run, keys.run, keys.queued],
      keys: [
        keys.session,
        chat,
        keys.events,
        old.run,
        old.journal,
        keys.run,
        keys.journal,
        keys.runs,
        retentionKeys(space, keys.shard).sessions,
        keys.runIndex,
        keys.treeUsage,
        keys.queued,
      ],
      args: (mode) => [
        mode,
        retried.id,
        expected.rev,
        JSON.stringify(retried),
        record.id,
        JSON.stringify(record),
        expected.chatLength,
        eventsMaxLength,
        plan.journalFields.length,
        ...plan.journalFields,
        ...(mode === 'check' ? [0] : entriesAndEvents(plan)),
      ],
      plan,
      shard: keys.shard,
    });
  }

  /** Writes a fork (its session, chat copy and run) and adds its first step. */
  writeFork(
    plan: ForkPlan,
    view: string | null,
  ): Promise<{ code: ContinuationWriteCode; detail: string | undefined }> {
    const { space, eventsMaxLength } = this.options;
    const { record } = plan;
    const origin = continuationOf(record);
    if (!origin) throw new Error('a fork names its origin');
    const original = sessionKeys(space, origin.session_id);
    const keys = runKeys(space, record.session_id, record.id);
    const chat = chatKey(space, record.session_id, record.chat_id);
    return this.checkedWrite({
      script: 'fork-run',
      watch: [keys.session, keys.run, chat],
      keys: [
        original.events,
        chatKey(space, origin.session_id, record.chat_id),
        keys.session,
        chat,
        chatViewKey(chat),
        keys.events,
        keys.run,
        keys.runs,
        retentionKeys(space, keys.shard).sessions,
        keys.runIndex,
      ],
      args: (mode) => [
        mode,
        JSON.stringify(plan.sessionRecord),
        record.id,
        JSON.stringify(record),
        plan.copied,
        view ?? '',
        eventsMaxLength,
        encodeEvent(plan.originEvent),
        ...(mode === 'check' ? [0] : entriesAndEvents(plan)),
      ],
      plan,
      shard: keys.shard,
    });
  }

  private async checkedWrite(
    write: ContinuationWrite,
  ): Promise<{ code: ContinuationWriteCode; detail: string | undefined }> {
    const first = write.plan.first;
    const jobId = stepJobId.iteration(first.data.run_id, first.data.iteration);
    const { code, detail } = await this.writer.write({
      watch: write.watch,
      script: write.script,
      refusable: true,
      keys: write.keys,
      args: write.args,
      step: { shard: write.shard, kind: first.kind, data: first.data, jobId },
    });
    return { code: code as ContinuationWriteCode, detail };
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}

interface ContinuationWrite {
  script: 'retry-run' | 'fork-run';
  watch: string[];
  keys: string[];
  args: (mode: 'check' | 'create') => (string | number)[];
  plan: RunContinuation;
  shard: number;
}

function entriesAndEvents(plan: RunContinuation): (string | number)[] {
  return [plan.messages.length, ...plan.messages.map(encodeChatEntry), ...plan.events.map(encodeEvent)];
}
