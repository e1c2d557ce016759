import { z } from 'zod';
import type { ToolContext } from '../../tool.js';

/**
 * Bounds of what the session toolboxes (state, tasks, notes) keep per session, so no model can grow Redis
 * without end. Everything is deleted with the session.
 */
export const sessionDataLimits = {
  /** Characters of one state value (as JSON) or one note. */
  valueChars: 65_536,
  stateKeys: 1_000,
  tasks: 1_000,
  notes: 1_000,
  /** Characters of a state key or a note name. */
  nameChars: 200,
  /** state_delete calls whose answers are kept, so a call run again after a crash deletes nothing more. */
  deleteAnswers: 1_000,
  /** Longest a state_watch may wait. */
  watchTimeoutS: 7 * 24 * 3600,
} as const;

/** Who did something, as task records keep it. */
export interface Actor {
  agent: string;
  run_id: string;
}

export function actorOf(context: Pick<ToolContext, 'agent' | 'runId'>): Actor {
  return { agent: context.agent, run_id: context.runId };
}

/** JSON text of a value, refused (naming the field) when it is larger than a session may keep. */
export function boundedJson(value: unknown, field: string): string {
  const text = JSON.stringify(value ?? null);
  if (text.length > sessionDataLimits.valueChars) {
    throw new Error(
      `${field} is ${text.length} characters as JSON; at most ${sessionDataLimits.valueChars} fit: store a ` +
        'shorter value or split it over several keys',
    );
  }
  return text;
}

/** A state key or note name: short, printable text. */
export function nameSchema(what: string) {
  return z
    .string()
    .min(1)
    .max(sessionDataLimits.nameChars)
    .refine((name) => !/\p{Cc}/u.test(name), { message: `a ${what} may not contain control characters` });
}
