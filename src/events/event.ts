import { z } from 'zod';
import { messageSchema } from '../chat/index.js';
import { usageSchema } from '../models/usage.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { resultMetadataSchema } from './result-metadata.js';

/**
 * The one event vocabulary. An event is appended to its session's stream in the same atomic commit as the
 * state change it reports; its stream id is its id.
 */
const runError = z.strictObject({ code: z.string(), message: z.string() });

/** One sub-goal of a supervisor, as a progress event and the API show it. */
export const subGoalStatusLineSchema = z.strictObject({
  id: z.string(),
  title: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed', 'failed']),
});

export const eventDataSchemas = {
  run_started: z.strictObject({ input: z.string() }),
  /** An agent begins working on a run (with its parent run and depth once runs delegate). */
  agent_start: z.strictObject({
    parent_run_id: z.string().nullable(),
    depth: z.number().int(),
    prefix: z.string(),
    /** The run this one continues (a retry, or a fork in another session); absent for a new run. */
    origin: z
      .strictObject({
        kind: z.enum(['retry', 'fork']),
        run_id: z.string(),
        session_id: z.string(),
        at_iteration: z.number().int().positive().nullable(),
      })
      .optional(),
  }),
  agent_end: z.strictObject({
    status: z.string(),
    parent_run_id: z.string().nullable(),
    depth: z.number().int(),
    prefix: z.string(),
    /** From the run's start (its creation when it never started) to its end; absent on older events. */
    duration_ms: z.number().int().nonnegative().optional(),
    /** What the run's result says about itself (core/result-metadata.ts); absent on older events. */
    metadata: resultMetadataSchema.optional(),
  }),
  message_added: z.strictObject({ chat_id: z.string(), index: z.number().int(), message: messageSchema }),
  tool_call_start: z.strictObject({
    iteration: z.number().int(),
    tool_call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
  }),
  tool_call_end: z.strictObject({
    iteration: z.number().int(),
    tool_call_id: z.string(),
    name: z.string(),
    is_error: z.boolean(),
    /** The result, cut to a few KB: the chat holds the whole of it. */
    content: z.string(),
    interrupted: z.enum(['rerun', 'outcome_unknown']).optional(),
  }),
  /**
   * A file of the workspace that a tool call created, changed or deleted (filesystem and exec toolboxes, and
   * any tool that reports one), committed with the call's outcome: once per file and call. `lines_added` and
   * `lines_removed` when the tool knew both texts; `more_changes` on a call's last event when it changed
   * more files than one call reports.
   */
  file_change: z.strictObject({
    iteration: z.number().int(),
    tool_call_id: z.string(),
    name: z.string(),
    path: z.string(),
    change: z.enum(['created', 'modified', 'deleted']),
    size: z.number().int().nonnegative().nullable(),
    size_before: z.number().int().nonnegative().nullable(),
    lines_added: z.number().int().nonnegative().optional(),
    lines_removed: z.number().int().nonnegative().optional(),
    more_changes: z.number().int().positive().optional(),
  }),
  /** A step attempt failed and will be retried (or not, when `final`). */
  error: z.strictObject({
    step: z.string(),
    attempt: z.number().int(),
    code: z.string(),
    message: z.string(),
    final: z.boolean(),
    retry_in_ms: z.number().int().nullable(),
  }),
  /** A question to a person (an ask_user call, or a tool call awaiting approval). */
  ask_user: z.strictObject({
    question_id: z.string(),
    kind: z.enum(['ask_user', 'approval', 'budget']),
    question: z.string(),
    options: z.array(z.string()),
    tool: z.strictObject({ name: z.string(), tool_call_id: z.string(), arguments: z.string() }).nullable(),
    timeout_at: z.string().nullable(),
  }),
  question_answered: z.strictObject({
    question_id: z.string(),
    answered_by: z.enum(['user', 'timeout', 'remembered']),
    answer: z.unknown(),
    /** Which remembered approval answered it (answered_by `remembered`, decision 0046). */
    remembered: z
      .strictObject({
        key: z.string(),
        tool: z.string(),
        scope: z.enum(['tool', 'arguments', 'path_prefix']),
        path_prefix: z.string().nullable(),
      })
      .optional(),
  }),
  progress: z.strictObject({
    fraction: z.number().nullable(),
    message: z.string(),
    /** A supervisor's sub-goals as they stand after the change (options.supervisor). */
    sub_goals: z.array(subGoalStatusLineSchema).optional(),
    /** Something the supervisor should know, e.g. that sub-goals over max_sub_goals were cut. */
    warning: z.string().optional(),
  }),
  /**
   * The messages the model is sent were compacted: chat entries before `up_to` are now sent as a summary.
   * Token counts are estimates of the request before and after.
   */
  compaction: z.strictObject({
    iteration: z.number().int(),
    up_to: z.number().int(),
    tokens_before: z.number().int(),
    tokens_after: z.number().int(),
    reason: z.enum(['threshold', 'context_length_error']),
  }),
  /** The model repeated one tool call (same name and arguments) `count` times among its latest calls. */
  loop_detected: z.strictObject({
    iteration: z.number().int(),
    tool: z.string(),
    arguments: z.string(),
    count: z.number().int(),
    window_size: z.number().int(),
  }),
  /**
   * A final answer failed its check (`check`: `output_guardrail`, or `options.output_schema`) and was sent
   * back with the reason: the run goes on for another answer. The rejected reply is the message_added of
   * the same iteration, which follows; `retry` counts the answers sent back so far (at most `max_retries`).
   */
  answer_rejected: z.strictObject({
    iteration: z.number().int(),
    check: z.string(),
    reason: z.string(),
    retry: z.number().int(),
    max_retries: z.number().int(),
  }),
  /** Tool calls failed `failures` times in a row: the model is asked to reflect before going on. */
  reflection: z.strictObject({ iteration: z.number().int(), failures: z.number().int() }),
  /**
   * A piece of a model reply in progress (agents with options.stream). Not a state change: the recorded reply
   * (message_added) is the truth; `attempt` tells the deltas of a retried attempt apart.
   */
  text_delta: z.strictObject({ iteration: z.number().int(), attempt: z.number().int(), delta: z.string() }),
  /** A new attempt of an iteration begins: drop the text_delta events of its earlier attempts. */
  attempt_retried: z.strictObject({ iteration: z.number().int(), attempt: z.number().int() }),
  run_completed: z.strictObject({ result: z.string(), usage: usageSchema, iterations: z.number().int() }),
  run_failed: z.strictObject({ error: runError, usage: usageSchema, iterations: z.number().int() }),
  run_cancelled: z.strictObject({ reason: z.string() }),
  /**
   * No live worker has served what a step of the run needs for `worker.capability_wait_s`: the run waits,
   * holding no worker, for one that advertises `missing` (decision 0031).
   */
  waiting_for_worker: z.strictObject({ missing: z.array(z.string()), since: z.iso.datetime() }),
  /** A worker that serves what the run waited for appeared: its step goes on (decision 0031). */
  worker_found: z.strictObject({ missing: z.array(z.string()), worker_id: z.string() }),
  /**
   * A message sent to the busy session waits in its queue (`reason: busy`, decision 0032), or a steered one
   * does because its run ended before its next model call (`run_ended`): it becomes the session's next run.
   * `run_id` is the run that was busy (or ended).
   */
  message_queued: z.strictObject({
    message_id: z.string(),
    reason: z.enum(['busy', 'run_ended']),
    position: z.number().int().nonnegative(),
  }),
  /** A message sent with `on_busy: steer` joined the run's chat before iteration `iteration`'s model call. */
  message_steered: z.strictObject({
    message_id: z.string(),
    iteration: z.number().int().positive(),
    index: z.number().int().nonnegative(),
  }),
  /**
   * The first event of a retry (POST /v1/runs/:id/retry): this run continues `retried_run_id`, which failed
   * or was cancelled, from its iteration `from_iteration` (the last whose reply was recorded).
   */
  /**
   * The run moved to another definition of its agent at this iteration (options.on_change: upgrade, or POST
   * /v1/runs/:id/upgrade; decision 0030): the hashes and the fields that changed. `to` null: it stays on
   * `from`, and `reason` says why (its agent is gone from the config).
   */
  agent_upgraded: z.strictObject({
    from: z.string(),
    to: z.string().nullable(),
    changed: z.array(z.string()),
    reason: z.string().nullable(),
  }),
  run_retried: z.strictObject({ retried_run_id: z.string(), from_iteration: z.number().int().nonnegative() }),
  /**
   * In the original session's log: this run (of session `fork_session_id`) continues a copy of the chat of
   * `from_run_id` up to its iteration `at_iteration` (POST /v1/runs/:id/fork).
   */
  run_forked: z.strictObject({
    from_run_id: z.string(),
    fork_session_id: z.string(),
    at_iteration: z.number().int().positive(),
  }),
} as const;

export type EventKind = keyof typeof eventDataSchemas;
export const eventKinds = Object.keys(eventDataSchemas) as EventKind[];

export type EventData<Kind extends EventKind> = z.infer<(typeof eventDataSchemas)[Kind]>;

/**
 * One event of any kind, typed by its kind: the fields of `Head` (what the record or the wire puts first),
 * then the kind, the run, the agent, the time and the kind's data.
 */
export type EventEnvelope<Head extends object> = {
  [Kind in EventKind]: Head & {
    kind: Kind;
    run_id: string;
    agent: string;
    time: string;
    data: EventData<Kind>;
  };
}[EventKind];

/**
 * The schema of `EventEnvelope<Head>`: one strict object per kind, discriminated by `kind`. The one place
 * the envelope is written, for the stored event and the wire's alike.
 */
export function eventUnionSchema(head: Record<string, z.ZodType>) {
  return z.discriminatedUnion(
    'kind',
    // zod cannot type a union built from a list of kinds; EventEnvelope is its type.
    eventKinds.map((kind) =>
      z.strictObject({
        ...head,
        kind: z.literal(kind),
        run_id: z.string(),
        agent: z.string(),
        time: z.iso.datetime(),
        data: eventDataSchemas[kind],
      }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  );
}

/** What is stored in the stream entry's `event` field. Version 1. */
export const storedEventSchema = eventUnionSchema({ v: z.literal(1) });

export type StoredEvent = EventEnvelope<{ v: 1 }>;

/** An event as read back: the stored event and its stream id. */
export type RatchetEvent = StoredEvent & { id: string };

export function buildEvent<Kind extends EventKind>(
  kind: Kind,
  run: { id: string; agent: string },
  data: EventData<Kind>,
  time: string,
): StoredEvent {
  return { v: 1, kind, run_id: run.id, agent: run.agent, time, data: boundEventData(data) } as StoredEvent;
}

/**
 * The most characters one string of an event may hold: every client reads every event, so a long one (a
 * message's text, tool arguments, a result) is cut to its start and a note; the chat and the run record keep
 * the whole. Equal to the default max_reply_chars, so a reply within the default limit is never cut here.
 */
export const eventStringLimit = 1_000_000;

/** `data` with every string over eventStringLimit cut (image parts are left whole: their data is not text). */
export function boundEventData<Data>(data: Data): Data {
  return boundValue(data) as Data;
}

function boundValue(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length <= eventStringLimit) return value;
    return `${value.slice(0, eventStringLimit)}\n[… ${value.length - eventStringLimit} more characters left out of this event]`;
  }
  if (typeof value !== 'object' || value === null) return value;
  // Every event of every step passes here, and almost none holds a string to cut: nothing is allocated
  // unless something is cut.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      const bounded = boundValue(item);
      if (bounded !== item) {
        copy ??= [...value];
        copy[index] = bounded;
      }
    }
    return copy ?? value;
  }
  if ((value as { type?: unknown }).type === 'image') return value;
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const bounded = boundValue(item);
    if (bounded !== item) {
      copy ??= { ...record };
      copy[key] = bounded;
    }
  }
  return copy ?? value;
}

/** Terminal event kinds of a run. */
export const runEndKinds: readonly EventKind[] = ['run_completed', 'run_failed', 'run_cancelled'];

export const toolContentPreviewLimit = 4096;

export function previewContent(content: string): string {
  if (content.length <= toolContentPreviewLimit) return content;
  return `${content.slice(0, toolContentPreviewLimit)}… (${content.length - toolContentPreviewLimit} more characters)`;
}

defineRecordKind({ name: 'event', version: 1, schema: storedEventSchema });
