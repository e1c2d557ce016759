import { z } from 'zod';

/**
 * Bounds of what comes from outside to wake a waiting run (decision 0033): events (`POST /v1/events`), signals
 * (`POST /v1/runs/:id/signal`) and what a model asks `wait_for_event` and `sleep` for. Checked where each
 * enters: the API's bodies, the config, the tools' input schemas.
 */
export const externalEventLimits = {
  /** Characters of an event name (letters, digits, `.`, `_`, `:`, `-`; it is part of a Redis key). */
  nameChars: 128,
  /** Characters of an event id or a signal id. */
  idChars: 128,
  /** Bytes of an event's or a signal's payload, as JSON. */
  payloadBytes: 65_536,
  /** Bytes of a wait's `match`, as JSON. */
  matchBytes: 4_096,
  /** Longest a wait_for_event may wait: 30 days. */
  maxWaitS: 30 * 86_400,
  /** Longest a sleep may sleep: 30 days (and never past the run's deadline). */
  maxSleepS: 30 * 86_400,
  /** Signals one run keeps (sent to it and not yet past retention); more are refused with 409. */
  signalsPerRun: 100,
  /** `events.retention_s`: at most 30 days. */
  maxRetentionS: 30 * 86_400,
  /** `events.max_kept_per_event`: at most this many events of one name are kept. */
  maxKeptPerEvent: 100_000,
  /** Characters of a trigger's `input` template. */
  templateChars: 8_000,
  /** Characters of the input a trigger renders from its template and the payload. */
  renderedInputChars: 100_000,
} as const;

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** An event's name: what waits and triggers match on. */
export const eventNameSchema = z
  .string()
  .min(1)
  .max(externalEventLimits.nameChars, {
    error: `at most ${externalEventLimits.nameChars} characters`,
  })
  .regex(namePattern, {
    error: 'must start with a letter or digit and hold only letters, digits, ".", "_", ":" and "-"',
  });

/** An event's (or a signal's) id: the same id twice delivers once. */
export const eventIdSchema = z
  .string()
  .min(1)
  .max(externalEventLimits.idChars, { error: `at most ${externalEventLimits.idChars} characters` })
  .regex(namePattern, {
    error: 'must start with a letter or digit and hold only letters, digits, ".", "_", ":" and "-"',
  });

const encoder = new TextEncoder();

/** Bytes of a value as JSON (UTF-8). */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value ?? null)).length;
}

/** A JSON value of at most `maxBytes` as JSON, with an error naming the limit. */
export function boundedJsonValue(maxBytes: number, what: string) {
  return z.unknown().superRefine((value, context) => {
    let bytes: number;
    try {
      bytes = jsonBytes(value);
    } catch {
      context.addIssue({ code: 'custom', message: `${what} must be JSON` });
      return;
    }
    if (bytes > maxBytes)
      context.addIssue({
        code: 'custom',
        message: `${what} is ${bytes} bytes as JSON; at most ${maxBytes} fit: send less`,
      });
  });
}
