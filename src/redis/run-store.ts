import type { ChainableCommander } from 'ioredis';
import { decodeChatEntries, encodeChatEntry, type Message } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import type { StoredEvent } from '../events/event.js';
import { recordMemo } from '../schemas/record-memo.js';
import { type AttemptStart, attemptsKept, journalField } from '../workflows/journal.js';
import {
  type RunStatus,
  runRecordSchema,
  type StoredRun,
  withoutStaleWait,
} from '../workflows/run-record.js';
import type {
  BeginToolCall,
  BeginToolCallResult,
  CommitRequest,
  CommitResult,
  SteerCommit,
  ToolOutcomeCommit,
} from '../workflows/steps/runner/step-commit.js';
import type { RedisClient } from './connection.js';
import {
  chatKey,
  chatViewKey,
  jobLockKey,
  type KeySpace,
  type RetentionKeys,
  type RunKeys,
  retentionKeys,
  runKeys,
  stepQueueKeys,
} from './keys.js';
import { runScript } from './scripts.js';

/** Maps the commit script's reply codes to a result, in one place. */
export function toCommitResult(reply: readonly string[]): CommitResult {
  const [code, first] = reply;
  switch (code) {
    case 'OK':
      return { status: 'ok', eventIds: reply.slice(1) };
    case 'DONE':
      return { status: 'done', value: first ?? '' };
    case 'LOCK_LOST':
      return { status: 'lock_lost' };
    case 'NO_RUN':
      return { status: 'no_run' };
    case 'RUN_FINISHED':
      return { status: 'run_finished', runStatus: first as RunStatus };
    case 'CONFLICT':
      return { status: 'conflict', what: first ?? 'unknown' };
    default:
      throw new RatchetError('internal', `commit-step returned an unknown reply: ${JSON.stringify(reply)}`);
  }
}

/** What every fenced write of a step names: its run's keys, its chat, its job's lock and token. */
export interface StepWrite {
  keys: RunKeys;
  chatKey: string;
  lockKey: string;
  /** The job's lock token: the scripts refuse the write when another worker holds the lock. */
  token: string;
  eventsMaxLength: number;
  /** The shard's retention indexes (a commit that finishes a run records when). */
  retention: RetentionKeys;
  /** The shard's step queue (stepQueueKeys): a commit adds the run's next step jobs there in its call. */
  queue: { keys: string[]; jobPrefix: string };
  /**
   * This execution's note in the step's attempts record (decision 0019): the journal field and the note's
   * JSON, written by the first script the step runs. Absent: nothing is noted.
   */
  attempt?: { field: string; note: string };
}

/**
 * Where one execution of a step job writes: its run's keys, the chat it works on, its job's lock and token.
 * Built once per execution, from the job (every step job names its session, run and chat).
 */
export function stepWriteOf(input: {
  space: KeySpace;
  job: { session_id: string; run_id: string; chat_id: string };
  jobId: string;
  token: string;
  eventsMaxLength: number;
  attempt?: AttemptStart | undefined;
}): StepWrite {
  const { space, job } = input;
  const keys = runKeys(space, job.session_id, job.run_id);
  return {
    keys,
    chatKey: chatKey(space, job.session_id, job.chat_id),
    lockKey: jobLockKey(space, keys.shard, input.jobId),
    token: input.token,
    eventsMaxLength: input.eventsMaxLength,
    retention: retentionKeys(space, keys.shard),
    queue: stepQueueKeys(space, keys.shard),
    ...(input.attempt
      ? { attempt: { field: journalField.attempts(input.jobId), note: JSON.stringify(input.attempt) } }
      : {}),
  };
}

/**
 * A run commit as commit-step writes it: the step's request, where the step writes, and the keys of the usage
 * sums the request names (absent: the session's and the run's own keys stand in, which the script skips).
 */
export type RunCommit<JournalValue> = CommitRequest<JournalValue> &
  StepWrite & {
    agentUsageKey?: string;
    treeUsageKey?: string;
    /** The next step jobs the commit adds in its call (StepQueues.jobsInCommit); '' or absent: none. */
    jobs?: string;
    /** The step's own job completed in the commit's call (decision 0056); absent: the worker completes it. */
    completion?: CompletionInCommit | undefined;
  };

/**
 * BullMQ's completion of a step's own job, made by the commit that is the step's last write (decision 0056):
 * `moveToFinished`'s 14 keys and 8 arguments as BullMQ's worker builds them, and who is told its reply.
 */
export interface CompletionInCommit {
  readonly keys: readonly string[];
  readonly args: readonly (string | number | Buffer)[];
  /** BullMQ's reply (the next job, 0, or an error code), when the commit was made; never when refused. */
  done(reply: unknown): void;
}

/** The completion's reply, the last element of an OK commit that asked for it (commit-step, commit-tool-outcome). */
function takeCompletion(reply: unknown[], completion: CompletionInCommit | undefined): void {
  if (completion && reply[0] === 'OK') completion.done(reply.pop());
}

/** `field=amount,...` for the commit script's usage sums. */
export function encodeIncrements(usage: Readonly<Record<string, number>> | undefined): string {
  if (!usage) return '';
  return Object.entries(usage)
    .filter(([, amount]) => amount !== 0)
    .map(([field, amount]) => `${field}=${amount}`)
    .join(',');
}

export async function commitStep<JournalValue>(
  redis: RedisClient,
  request: RunCommit<JournalValue>,
): Promise<CommitResult> {
  const { keys, plan } = request;
  const record = plan.record ? JSON.stringify(withoutStaleWait(plan.record)) : '';
  const entries = plan.messages.map(encodeChatEntry);
  const reply = await runScript(
    redis,
    'commit-step',
    [
      request.lockKey,
      keys.run,
      keys.journal,
      request.chatKey,
      keys.events,
      keys.session,
      keys.usage,
      request.agentUsageKey ?? keys.usage,
      request.treeUsageKey ?? keys.run,
      chatViewKey(request.chatKey),
      request.retention.finishedRuns,
      request.retention.sessions,
      keys.runIndex,
      keys.steers,
      keys.queued,
      request.retention.queueStarts,
      ...request.queue.keys,
      ...(request.completion?.keys ?? []),
    ],
    [
      request.token,
      request.journalField,
      JSON.stringify(plan.journal),
      request.expectedRev === undefined ? '' : String(request.expectedRev),
      record,
      request.expectedChatLength === undefined ? '' : String(request.expectedChatLength),
      plan.record?.id ?? '',
      plan.finished ? '1' : '0',
      request.eventsMaxLength,
      encodeIncrements(plan.usage),
      request.view ?? '',
      request.queue.jobPrefix,
      request.jobs ?? '',
      plan.messages.length,
      ...entries,
      ...plan.events.map(encodeEvent),
      ...(request.completion?.args ?? []),
    ],
  );
  takeCompletion(reply, request.completion);
  return withJobsAdded(toCommitResult(reply), request.jobs);
}

/** An OK commit that named jobs added them (the scripts add them whenever they write). */
function withJobsAdded(result: CommitResult, jobs: string | undefined): CommitResult {
  return result.status === 'ok' && jobs ? { ...result, enqueued: true } : result;
}

/** KEYS of the tool-call scripts (begin-tool-call, commit-tool-outcome): lock, run, journal, chat, events. */
function toolCallScriptKeys(write: StepWrite): string[] {
  return [write.lockKey, write.keys.run, write.keys.journal, write.chatKey, write.keys.events];
}

/** The journal fields of one kind for every call of iteration n's batch, in call order. */
function batchFields(
  iteration: number,
  calls: number,
  field: (iteration: number, index: number) => string,
): string[] {
  return Array.from({ length: calls }, (_, index) => field(iteration, index));
}

/** Appends the messages steered into the run and takes them off its list (commit-steers.lua). */
export async function commitSteers(
  redis: RedisClient,
  commit: SteerCommit & StepWrite,
): Promise<CommitResult> {
  const reply = await runScript(
    redis,
    'commit-steers',
    [
      commit.lockKey,
      commit.keys.run,
      commit.keys.journal,
      commit.chatKey,
      commit.keys.events,
      commit.keys.steers,
    ],
    [
      commit.token,
      commit.journalField,
      JSON.stringify(commit.journal),
      commit.expectedChatLength,
      commit.eventsMaxLength,
      commit.steeredIds.length,
      ...commit.steeredIds,
      commit.messages.length,
      ...commit.messages.map(encodeChatEntry),
      ...commit.events.map(encodeEvent),
    ],
  );
  return toCommitResult(reply);
}

/** Records a tool call's outcome; the commit that completes its iteration's batch appends all results. */
export async function commitToolOutcome(
  redis: RedisClient,
  commit: ToolOutcomeCommit & StepWrite & { jobs?: string; completion?: CompletionInCommit | undefined },
): Promise<CommitResult> {
  const keys = [...toolCallScriptKeys(commit), ...commit.queue.keys, ...(commit.completion?.keys ?? [])];
  const entry = encodeChatEntry(commit.message);
  const reply = await runScript(redis, 'commit-tool-outcome', keys, [
    commit.token,
    journalField.toolOutcome(commit.iteration, commit.index),
    JSON.stringify(commit.outcome),
    commit.eventsMaxLength,
    journalField.results(commit.iteration),
    commit.index,
    commit.calls,
    commit.replyIndex + 1,
    entry,
    encodeEvent(commit.messageAdded),
    commit.events.length,
    ...commit.events.map(encodeEvent),
    ...batchFields(commit.iteration, commit.calls, journalField.toolEntry),
    ...batchFields(commit.iteration, commit.calls, journalField.toolAdded),
    commit.queue.jobPrefix,
    commit.jobs ?? '',
    ...(commit.completion?.args ?? []),
  ]);
  takeCompletion(reply, commit.completion);
  if (reply[0] !== 'OK') return toCommitResult(reply);
  const completedBatch = reply[1] !== '0';
  return {
    status: 'ok',
    completedBatch,
    eventIds: reply.slice(2),
    ...(completedBatch && commit.jobs ? { enqueued: true } : {}),
  };
}

/** Reads a tool call's state and, when it never started, records its intent and start event (one round trip). */
export async function beginToolCall(
  redis: RedisClient,
  begin: BeginToolCall & StepWrite,
): Promise<BeginToolCallResult> {
  const reply = await runScript(redis, 'begin-tool-call', toolCallScriptKeys(begin), [
    begin.token,
    journalField.toolIntent(begin.iteration, begin.index),
    journalField.toolOutcome(begin.iteration, begin.index),
    begin.replyIndex,
    begin.index,
    JSON.stringify(begin.intent),
    begin.eventsMaxLength,
    begin.runId,
    begin.agent,
    begin.time,
    begin.iteration,
    begin.attempt?.field ?? '',
    begin.attempt?.note ?? '',
    attemptsKept,
  ]);
  const [code, first, second] = reply;
  if (code === 'STARTED') return { status: 'started', call: first ?? '' };
  if (code === 'INTERRUPTED') return { status: 'interrupted', intent: first ?? '', call: second ?? '' };
  if (code === 'NO_REPLY') return { status: 'no_reply' };
  const result = toCommitResult(reply);
  if (result.status === 'ok' || result.status === 'conflict') {
    throw new RatchetError('internal', `begin-tool-call returned ${JSON.stringify(reply)}`);
  }
  return result;
}

/** Runs a pipeline and returns its replies, throwing the first command error. */
export async function execPipeline(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = await pipeline.exec();
  if (!replies) throw new RatchetError('redis_unavailable', 'a Redis pipeline was aborted');
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

export function encodeEvent(event: StoredEvent): string {
  return JSON.stringify(event);
}

/**
 * The run records this process has read, by their text (decision 0055): the tool calls of one batch read the
 * same record, and a tool call leaves it unchanged. Each text is validated at its first read here. Frozen:
 * every reader shares them.
 */
const runRecords = recordMemo(runRecordSchema, 8 * 1024 * 1024);

export function parseRun(record: string, rev: string | null, where: string): StoredRun {
  return { record: runRecords.parse(record, where), rev: Number(rev ?? 0) };
}

export async function loadRun(
  redis: RedisClient,
  keys: RunKeys,
  runId: string,
): Promise<StoredRun | undefined> {
  const [record, rev] = await redis.hmget(keys.run, 'record', 'rev');
  if (!record) return undefined;
  return parseRun(record, rev ?? null, `run ${runId}`);
}

export async function readChat(redis: RedisClient, chatKey: string, from = 0, to = -1): Promise<Message[]> {
  const entries = await redis.lrange(chatKey, from, to);
  return decodeChatEntries(entries, chatKey, from);
}
