import { z } from 'zod';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { defineRecordKind } from '../../../schemas/record-kinds.js';

export const taskStatuses = ['pending', 'in_progress', 'completed', 'failed'] as const;
export type TaskStatus = (typeof taskStatuses)[number];

const actorSchema = z.strictObject({ agent: z.string(), run_id: z.string() });

/**
 * A task of a session's board, as stored (the task-* scripts patch it with cjson, so it holds no arrays:
 * cjson would write an empty one back as an object).
 */
export const taskRecordSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  title: z.string(),
  description: z.string(),
  status: z.enum(taskStatuses),
  /** Who claimed the task; null while it is pending or when nobody claimed it. */
  assignee: actorSchema.nullable(),
  /** Idempotency key of the call that claimed it: that call may claim it again (a retry). */
  claim_key: z.string().nullable(),
  /** The note of the latest status update. */
  note: z.string().nullable(),
  created_by: actorSchema,
  updated_by: actorSchema.nullable(),
  /** Idempotency key of the latest update: that call running again changes nothing. */
  update_key: z.string().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type TaskRecord = z.infer<typeof taskRecordSchema>;

export function parseTask(text: string, what: string): TaskRecord {
  return parseJsonRecord(taskRecordSchema, text, what);
}

/** What a model sees of a task. */
export function taskView(task: TaskRecord) {
  return {
    id: task.id,
    title: task.title,
    description: task.description,
    status: task.status,
    assignee: task.assignee?.agent ?? null,
    note: task.note,
    updated_at: task.updated_at,
  };
}

defineRecordKind({ name: 'session.task', version: 1, schema: taskRecordSchema });
