import { z } from 'zod';
import { defineRecordKind } from '../../../schemas/record-kinds.js';

/**
 * What a wait_for_event or sleep call keeps (decision 0033): written by its first look, read by every later one,
 * settled once. Plain versioned JSON in the run's waits hash.
 */
export const eventWaitRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal('event'),
  event: z.string(),
  /** The filter the payload must contain; null: any payload. */
  match: z.unknown(),
  /** When the wait times out (ms since the epoch), fixed by its first look. */
  deadline_ms: z.number().int(),
  started_at: z.iso.datetime(),
  status: z.enum(['waiting', 'received', 'timed_out']),
  /** What it received: an event sent to the deployment or a signal sent to the run. */
  source: z.enum(['event', 'signal']).nullable(),
  event_id: z.string().nullable(),
  payload: z.unknown(),
  sent_at: z.iso.datetime().nullable(),
  settled_at: z.iso.datetime().nullable(),
});

export const sleepRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal('sleep'),
  /** When the sleep ends (ms since the epoch), fixed by its first look. */
  until_ms: z.number().int(),
  started_at: z.iso.datetime(),
});

export const waitRecordSchema = z.discriminatedUnion('kind', [eventWaitRecordSchema, sleepRecordSchema]);

export type EventWaitRecord = z.output<typeof eventWaitRecordSchema>;
export type SleepRecord = z.output<typeof sleepRecordSchema>;
export type WaitRecord = z.output<typeof waitRecordSchema>;

/** An event or a signal as it is kept for waits to receive. */
export const keptEventSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  event: z.string(),
  payload: z.unknown(),
  /** When it was sent (ISO). */
  at: z.iso.datetime(),
  /** Events sent to the deployment: when it leaves the retention window (ms since the epoch). */
  expires_ms: z.number().int().optional(),
});

export type KeptEvent = z.output<typeof keptEventSchema>;

defineRecordKind({ name: 'wait.event', version: 1, schema: eventWaitRecordSchema });
defineRecordKind({ name: 'wait.sleep', version: 1, schema: sleepRecordSchema });
defineRecordKind({ name: 'event.kept', version: 1, schema: keptEventSchema });

/**
 * The port of the `waits` toolbox, implemented by src/redis under the run's session (waits, signals) and the
 * deployment's event keys. Records travel as JSON text; the toolbox parses them.
 */
export interface WaitStore {
  /**
   * The call's wait: `recordJson` is written on its first look, the stored one is returned on every look,
   * with the signals sent to the run. `event` ('' for a sleep) lists the step as waiting for it.
   */
  beginWait(input: {
    runId: string;
    callKey: string;
    jobId: string;
    event: string;
    recordJson: string;
  }): Promise<{ kind: 'open'; recordJson: string; signals: string[] } | { kind: 'run_finished' }>;
  /** Ends the wait once; the first settlement stands and is returned. `taken`: the run received that event. */
  settleWait(input: {
    runId: string;
    callKey: string;
    jobId: string;
    /** `e:<event id>` or `s:<signal id>`; null for a timeout. */
    eventKey: string | null;
    recordJson: string;
  }): Promise<{ kind: 'settled'; recordJson: string } | { kind: 'taken' } | { kind: 'run_finished' }>;
  /** Lists the step among the waiters of an event name until its deadline, so a publish wakes it. */
  listenForEvent(input: { event: string; jobId: string; deadlineMs: number }): Promise<void>;
  stopListening(input: { event: string; jobId: string }): Promise<void>;
  /**
   * A page of the kept events of a name, oldest first: at most `limit` after the entry `after` (from the
   * oldest when absent), with the id to pass as `after` for the next page (null: none left).
   */
  recentEvents(
    event: string,
    page: { after?: string | undefined; limit: number },
  ): Promise<{ events: string[]; next: string | null }>;
}
