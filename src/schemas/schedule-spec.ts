import { z } from 'zod';

/** The most characters of a schedule's input (the task each of its runs is given). */
export const scheduleInputMaxChars = 32_768;
/** The longest interval of an `every_s` schedule: one year. */
export const scheduleEveryMaxS = 31_536_000;
/** The longest a fire may be late before it counts as missed (`missed_after_s`): one day. */
export const scheduleMissedAfterMaxS = 86_400;

/** A schedule id, and a tenant name: what a Redis key and a URL carry without escaping. */
const namePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const nameError = 'must be 1 to 64 characters: a-z, 0-9, "_" and "-", starting with a letter or digit';

/**
 * What a schedule is (config `schedules`, `POST /v1/schedules`): when it fires (`cron` in `timezone`, or every
 * `every_s` seconds), what each fire starts (a run of `agent` on `input`, for `tenant`), and what happens
 * when the previous run is not finished (`overlap`) or fires were missed while no process ran (`catch_up`).
 * The cron expression and the time zone are checked beside it (config/schedule-config-schema.ts), so that
 * this shape loads in a browser.
 */
export const scheduleSpecSchema = z
  .strictObject({
    id: z.string().regex(namePattern, { error: nameError }),
    /** Five or six fields (seconds first when six), as BullMQ's job schedulers read them. */
    cron: z.string().min(1).max(128).optional(),
    every_s: z.int().min(1).max(scheduleEveryMaxS).optional(),
    /** The IANA time zone the cron expression is read in. */
    timezone: z.string().min(1).max(64).default('UTC'),
    agent: z.string().min(1).max(128),
    input: z.string().min(1).max(scheduleInputMaxChars),
    tenant: z.string().regex(namePattern, { error: nameError }).optional(),
    /** While the schedule's previous run is unfinished: skip the fire, queue it (one at most), or start anyway. */
    overlap: z.enum(['skip', 'queue', 'allow']).default('skip'),
    /** Fires missed while no process ran: start one run for them (`once`), or none. */
    catch_up: z.enum(['none', 'once']).default('none'),
    /** A fire taken up more than this many seconds after its time was missed (no process ran). */
    missed_after_s: z.int().min(1).max(scheduleMissedAfterMaxS).default(120),
  })
  .superRefine((spec, context) => {
    if ((spec.cron === undefined) === (spec.every_s === undefined)) {
      context.addIssue({
        code: 'custom',
        path: spec.cron === undefined ? ['cron'] : ['every_s'],
        message: 'give exactly one of cron (a cron expression) and every_s (seconds between fires)',
      });
    }
  });
export type ScheduleSpec = z.output<typeof scheduleSpecSchema>;
export type ScheduleSpecInput = z.input<typeof scheduleSpecSchema>;
