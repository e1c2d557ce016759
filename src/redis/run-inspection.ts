import type { Queue } from 'bullmq';
import { decodeChatEntry, type Message } from '../chat/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { compactionEntrySchema } from '../workflows/core/effects/context-view.js';
import {
  buildRunTimeline,
  buildRunTree,
  type FailedAttemptRecord,
  type IterationRecords,
  type RunTimeline,
  type RunTreeNode,
  type ToolCallRecords,
} from '../workflows/core/run-timeline.js';
import { questionIdOf, stepJobId } from '../workflows/ids.js';
import {
  type AttemptsEntry,
  attemptsEntrySchema,
  failedAttemptSchema,
  journalField,
  replyEntrySchema,
  toolIntentSchema,
  toolOutcomeSchema,
} from '../workflows/journal.js';
import { type QuestionRecord, questionRecordSchema } from '../workflows/question-record.js';
import { type RunRecord, runRecordSchema } from '../workflows/run-record.js';
import type { RedisClient } from './connection.js';
import { chatKey, type KeySpace, runKeys, sessionKeys } from './keys.js';
import { execPipeline } from './run-store.js';

/**
 * The reads of GET /v1/runs/:id/tree, /steps and GET /v1/system: a few pipelined round trips each, every one
 * bounded (runs of a tree, iterations of a page, attempts of a step, questions of a call), never a scan of the
 * keyspace. What they read is parsed with its schema; nothing is computed by calling a model or a tool.
 */

/** Runs a tree answer holds at most (deeper or wider trees are cut, and say so). */
export const maxTreeRuns = 500;
/** Failed-attempt marks read per step (a step has at most `worker.step_attempts` plus a few). */
const failedMarksRead = 12;
/** Questions of one tool call's handler read (ctx.ask() in order). */
const asksRead = 8;
/** Step jobs whose names are counted per state and shard for the per-kind split. */
const kindSample = 1000;

function runOf(text: string | null | undefined, runId: string): RunRecord | undefined {
  return text ? parseJsonRecord(runRecordSchema, text, `run ${runId}`) : undefined;
}

async function childRecords(
  redis: RedisClient,
  space: KeySpace,
  runs: readonly RunRecord[],
  budget: number,
): Promise<Map<string, RunRecord[]>> {
  const byParent = new Map<string, RunRecord[]>();
  if (runs.length === 0) return byParent;
  const sets = (await execPipeline(
    runs.reduce(
      (pipeline, run) => pipeline.smembers(runKeys(space, run.session_id, run.id).children),
      redis.pipeline(),
    ),
  )) as string[][];
  const wanted = runs.flatMap((run, index) =>
    (sets[index] ?? []).map((childId) => ({ parent: run, childId })),
  );
  const read = wanted.slice(0, Math.max(0, budget));
  if (read.length === 0) return byParent;
  const texts = (await execPipeline(
    read.reduce(
      (pipeline, { parent, childId }) =>
        pipeline.hget(runKeys(space, parent.session_id, childId).run, 'record'),
      redis.pipeline(),
    ),
  )) as (string | null)[];
  read.forEach(({ parent, childId }, index) => {
    const child = runOf(texts[index], childId);
    if (!child) return;
    const list = byParent.get(parent.id) ?? [];
    list.push(child);
    byParent.set(parent.id, list);
  });
  for (const list of byParent.values())
    list.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return byParent;
}

export async function readRunTree(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
  shown: { pendingOf: (runId: string) => number; nowMs: number },
): Promise<{ runs: RunTreeNode[]; truncated: boolean } | undefined> {
  const root = runOf(await redis.hget(runKeys(space, sessionId, runId).run, 'record'), runId);
  if (!root) return undefined;
  const children = new Map<string, RunRecord[]>();
  let level: RunRecord[] = [root];
  let count = 1;
  let truncated = false;
  // One level per round trip pair: a tree is as deep as max_delegation_depth allows.
  while (level.length > 0) {
    const found = await childRecords(redis, space, level, maxTreeRuns - count);
    const next: RunRecord[] = [];
    for (const [parent, list] of found) {
      children.set(parent, list);
      next.push(...list);
    }
    count += next.length;
    if (count >= maxTreeRuns) truncated = true;
    level = count >= maxTreeRuns ? [] : next;
  }
  return {
    runs: buildRunTree(root, (id) => children.get(id) ?? [], shown.pendingOf, shown.nowMs),
    truncated,
  };
}

function attemptsOf(text: string | null | undefined, where: string): AttemptsEntry | undefined {
  return text ? parseJsonRecord(attemptsEntrySchema, text, where) : undefined;
}

function failedOf(texts: readonly (string | null | undefined)[], where: string): FailedAttemptRecord[] {
  return texts.flatMap((text, index) => {
    if (!text) return [];
    const entry = parseJsonRecord(failedAttemptSchema, text, `${where} attempt ${index + 1}`);
    return [{ attempt: index + 1, at: entry.at, code: entry.code ?? null }];
  });
}

function failedFields(jobId: string): string[] {
  return Array.from({ length: failedMarksRead }, (_, index) => journalField.attemptFailed(jobId, index + 1));
}

function questionsOf(texts: readonly (string | null)[], where: string): QuestionRecord[] {
  return texts.flatMap((text) => (text ? [parseJsonRecord(questionRecordSchema, text, where)] : []));
}

export interface StepsPage {
  /** The first iteration to show (1 = the first). */
  from: number;
  /** Iterations shown at most. */
  limit: number;
  /** Characters of each argument and result shown (their full size is given beside). */
  cutAt: number;
}

/**
 * A page of a run's timeline: the iterations `from` to `from + limit - 1` (the one in progress included).
 * Three round trips: the run and its children; each iteration's journal fields; each call's fields, the chat
 * entries of the replies and results, and the questions.
 */
export async function readRunSteps(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
  page: StepsPage,
): Promise<RunTimeline | undefined> {
  const keys = runKeys(space, sessionId, runId);
  const [text, childIds] = (await execPipeline(
    redis.pipeline().hget(keys.run, 'record').smembers(keys.children),
  )) as [string | null, string[]];
  const run = runOf(text, runId);
  if (!run) return undefined;
  // The iteration in progress, while the run is not finished (a queued run's first may be running).
  const finished = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled';
  const last = run.iteration + (finished ? 0 : 1);
  const to = Math.min(last, page.from + page.limit - 1);
  const numbers: number[] = [];
  for (let n = page.from; n <= to; n += 1) numbers.push(n);

  const second = redis.pipeline();
  for (const n of numbers) {
    const jobId = stepJobId.iteration(runId, n);
    second.hmget(
      keys.journal,
      journalField.reply(n),
      journalField.modelCalls(n),
      journalField.summaryCalls(n),
      journalField.attempts(jobId),
      ...failedFields(jobId),
    );
  }
  const children = childIds.slice(0, maxTreeRuns);
  for (const childId of children) second.hget(runKeys(space, sessionId, childId).run, 'record');
  const secondReplies = await execPipeline(second);
  const journals = secondReplies.slice(0, numbers.length) as (string | null)[][];
  const childRuns = (secondReplies.slice(numbers.length) as (string | null)[]).flatMap((child, index) => {
    const record = runOf(child, children[index] ?? '');
    return record ? [record] : [];
  });

  const chat = chatKey(space, sessionId, run.chat_id);
  const questions = sessionKeys(space, sessionId).questions;
  const third = redis.pipeline();
  const plans = numbers.map((n, index) => {
    const jobId = stepJobId.iteration(runId, n);
    const [replyText, calls, summaryCalls, attempts, ...failed] = journals[index] ?? [];
    const where = `journal of ${runId}, iteration ${n}`;
    const reply = replyText ? parseJsonRecord(replyEntrySchema, replyText, where) : undefined;
    const callCount = reply?.tool_calls.length ?? 0;
    if (reply) third.lrange(chat, reply.index, reply.index + 1 + callCount);
    const toolJobs = Array.from({ length: callCount }, (_, k) => stepJobId.tool(runId, n, k));
    toolJobs.forEach((toolJob, k) => {
      third.hmget(
        keys.journal,
        journalField.toolIntent(n, k),
        journalField.toolOutcome(n, k),
        journalField.toolEntry(n, k),
        journalField.attempts(toolJob),
        ...failedFields(toolJob),
      );
      third.hmget(
        questions,
        questionIdOf.approval(toolJob),
        ...Array.from({ length: asksRead }, (_, sequence) => questionIdOf.ask(toolJob, sequence)),
      );
    });
    third.hmget(
      questions,
      ...Array.from({ length: run.budget_raises + 1 }, (_, raise) => questionIdOf.budget(jobId, raise)),
    );
    const upTo = reply?.context?.summary_up_to;
    if (upTo !== null && upTo !== undefined) third.hget(keys.journal, journalField.compaction(n, upTo));
    return {
      n,
      jobId,
      reply,
      calls,
      summaryCalls,
      attempts: attemptsOf(attempts, `${where}: attempts`),
      failed: failedOf(failed, where),
      toolJobs,
      upTo,
    };
  });
  const thirdReplies = await execPipeline(third);
  let cursor = 0;
  const take = () => thirdReplies[cursor++];
  const iterations: IterationRecords[] = plans.map((plan) => {
    const where = `journal of ${runId}, iteration ${plan.n}`;
    const entries = plan.reply ? ((take() as string[]) ?? []) : [];
    const decoded = entries.map((entry, offset) =>
      decodeChatEntry(entry, `chat entry ${(plan.reply?.index ?? 0) + offset} of ${runId}`),
    );
    const replyMessage = decoded[0];
    const tools: ToolCallRecords[] = plan.toolJobs.map((toolJob, k) => {
      const [intent, outcome, pending, attempts, ...failed] = take() as (string | null)[];
      const asked = questionsOf(take() as (string | null)[], `question of ${toolJob}`);
      const part = replyMessage?.parts.filter((p) => p.type === 'tool_call')[k];
      const inChat = decoded[1 + k];
      const result: Message | undefined =
        inChat?.role === 'tool'
          ? inChat
          : pending
            ? decodeChatEntry(pending, `${where}: entry ${k}`)
            : undefined;
      return {
        index: k,
        jobId: toolJob,
        call:
          part?.type === 'tool_call'
            ? { id: part.id, name: part.name, arguments: part.arguments }
            : undefined,
        intent: intent ? parseJsonRecord(toolIntentSchema, intent, `${where}: intent ${k}`) : undefined,
        outcome: outcome ? parseJsonRecord(toolOutcomeSchema, outcome, `${where}: outcome ${k}`) : undefined,
        result,
        attempts: attemptsOf(attempts, `${where}: attempts of call ${k}`),
        failed: failedOf(failed, `${where}: call ${k}`),
        questions: asked,
        children: childRuns.filter((child) => child.parent?.job_id === toolJob),
      };
    });
    const budgetQuestions = questionsOf(take() as (string | null)[], `budget question of ${plan.jobId}`);
    const compactionText = plan.upTo !== null && plan.upTo !== undefined ? (take() as string | null) : null;
    const compaction = compactionText
      ? parseJsonRecord(compactionEntrySchema, compactionText, `${where}: compaction`)
      : undefined;
    return {
      iteration: plan.n,
      jobId: plan.jobId,
      reply: plan.reply,
      replyMessage,
      feedback: plan.reply?.decision === 'retry' ? decoded[1] : undefined,
      modelCalls: Number(plan.calls ?? 0),
      summaryCalls: Number(plan.summaryCalls ?? 0),
      compactedUpTo: compaction ? (plan.upTo ?? undefined) : undefined,
      summaryUsage:
        compaction?.usage === undefined
          ? undefined
          : { usage: compaction.usage, costUsd: compaction.cost_usd ?? 0 },
      questions: budgetQuestions,
      children: childRuns.filter((child) => child.parent?.job_id === plan.jobId),
      tools,
      attempts: plan.attempts,
      failed: plan.failed,
    };
  });
  return buildRunTimeline({
    run,
    iterations,
    nextFrom: to < last ? to + 1 : null,
    cutAt: page.cutAt,
  });
}

export const queueStates = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof queueStates)[number];

/**
 * The states split per step kind: besides those, BullMQ's priority lane, where a queued run's first step
 * waits for its admission (decision 0053).
 */
const kindStates = [...queueStates, 'prioritized'] as const;
type KindState = (typeof kindStates)[number];

export interface ShardQueue {
  shard: number;
  counts: Record<QueueState | 'waiting_children' | 'prioritized', number>;
  /**
   * Of the delayed jobs counted per kind, the steps parked on purpose (waiting for an answer, child runs, a
   * state key or a rate limit, holding no worker); the others wait for a retry's backoff.
   */
  parked: number;
  /** The same per step kind (job name), from at most `kindSample` jobs of each state. */
  by_kind: Record<string, Partial<Record<KindState | 'parked', number>>>;
  /** A state held more jobs than were counted per kind (and `parked` is from the same sample). */
  by_kind_sampled: boolean;
}

/**
 * Job counts of each shard's step queue: totals from BullMQ, and a bounded split per step kind. Of the delayed
 * jobs, `parked` counts the steps that wait on purpose (an answer, child runs, a state key, a rate limit: the
 * latest execution in their journal parked them) rather than for a retry's backoff.
 */
export async function readQueueCounts(
  redis: RedisClient,
  space: KeySpace,
  queues: readonly Queue[],
): Promise<ShardQueue[]> {
  return Promise.all(
    queues.map(async (queue, shard) => {
      const counts = await queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'failed',
        'waiting-children',
        'prioritized',
      );
      const byKind: ShardQueue['by_kind'] = {};
      const add = (name: string, state: KindState | 'parked') => {
        const kind = byKind[name] ?? {};
        kind[state] = (kind[state] ?? 0) + 1;
        byKind[name] = kind;
      };
      let sampled = false;
      let parked = 0;
      for (const state of kindStates) {
        const ids = await queue.getRanges([state === 'waiting' ? 'wait' : state], 0, kindSample - 1, true);
        if ((counts[state] ?? 0) > ids.length) sampled = true;
        if (ids.length === 0) continue;
        const jobs = (await execPipeline(
          ids.reduce((pipeline, id) => pipeline.hmget(queue.toKey(id), 'name', 'data'), redis.pipeline()),
        )) as (string | null)[][];
        const parkedJobs = state === 'delayed' ? await parkedOf(redis, space, ids, jobs) : new Set<number>();
        jobs.forEach(([name], index) => {
          if (typeof name !== 'string') return;
          add(name, state);
          if (parkedJobs.has(index)) {
            add(name, 'parked');
            parked += 1;
          }
        });
      }
      return {
        shard,
        counts: {
          waiting: counts.waiting ?? 0,
          active: counts.active ?? 0,
          delayed: counts.delayed ?? 0,
          failed: counts.failed ?? 0,
          waiting_children: counts['waiting-children'] ?? 0,
          prioritized: counts.prioritized ?? 0,
        },
        parked,
        by_kind: byKind,
        by_kind_sampled: sampled,
      };
    }),
  );
}

/**
 * Which of these delayed jobs are parked: their run's journal notes the job's latest execution as parked
 * (mark-parked.lua); a retry waiting for its backoff was not. One pipelined read; a job whose data or note
 * cannot be read counts as not parked (this is a dashboard's count, not a decision).
 */
async function parkedOf(
  redis: RedisClient,
  space: KeySpace,
  ids: readonly string[],
  jobs: readonly (string | null)[][],
): Promise<Set<number>> {
  const pipeline = redis.pipeline();
  const asked: number[] = [];
  jobs.forEach(([, data], index) => {
    const place = placeOf(data ?? null);
    if (!place) return;
    pipeline.hget(
      runKeys(space, place.session_id, place.run_id).journal,
      journalField.attempts(ids[index] ?? ''),
    );
    asked.push(index);
  });
  if (asked.length === 0) return new Set();
  const notes = (await execPipeline(pipeline)) as (string | null)[];
  const parked = new Set<number>();
  notes.forEach((text, offset) => {
    const parsed = text ? attemptsEntrySchema.safeParse(safeJson(text)) : undefined;
    if (parsed?.success && parsed.data.attempts.at(-1)?.parked_at !== undefined)
      parked.add(asked[offset] ?? -1);
  });
  return parked;
}

/** The run a step job belongs to, read leniently from its data (only the two ids are used). */
function placeOf(data: string | null): { session_id: string; run_id: string } | undefined {
  const value = data === null ? undefined : safeJson(data);
  if (typeof value !== 'object' || value === null) return undefined;
  const { session_id: sessionId, run_id: runId } = value as Record<string, unknown>;
  return typeof sessionId === 'string' && typeof runId === 'string'
    ? { session_id: sessionId, run_id: runId }
    : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
