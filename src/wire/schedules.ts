import { z } from 'zod';
import { scheduleSpecSchema } from '../schemas/index.js';

/**
 * Schedules on the wire (decision 0036): `POST /v1/schedules` takes a schedule's spec (the config's
 * `schedules` entry); the list, one schedule, pause and resume answer with its view.
 */

/** POST /v1/schedules: what the config's `schedules` entries hold. */
export const createScheduleBodySchema = scheduleSpecSchema;

export const scheduleParamsSchema = z.strictObject({
  id: z.string().min(1).max(64).describe('The schedule id.'),
});

const fireSchema = z.object({
  fire_at: z.iso.datetime(),
  outcome: z.enum(['run', 'skip']),
  /** The run the fire started; null when it started none. */
  run_id: z.string().nullable(),
  /** Why it started none: paused, missed, overlap, queue_full; null when it started a run. */
  reason: z.string().nullable(),
});

export const scheduleViewSchema = z.object({
  id: z.string(),
  spec: scheduleSpecSchema,
  source: z.enum(['config', 'api']).describe('Who made it: the config (synced by id at start) or the API.'),
  paused: z.boolean(),
  next_fire_at: z.iso.datetime().nullable().describe('When it fires next; null while paused.'),
  last_run_id: z.string().nullable().describe('The latest run a fire started.'),
  queued_fire_at: z.iso
    .datetime()
    .nullable()
    .describe('The fire waiting for the previous run to finish (overlap: queue).'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  recent_fires: z.array(fireSchema).describe('The latest fires, newest first (at most 20).'),
});

export const scheduleListSchema = z.object({ schedules: z.array(scheduleViewSchema) });

export type CreateScheduleBody = z.input<typeof createScheduleBodySchema>;
export type ScheduleView = z.output<typeof scheduleViewSchema>;
export type ScheduleFire = z.output<typeof fireSchema>;
export type ScheduleList = z.output<typeof scheduleListSchema>;
