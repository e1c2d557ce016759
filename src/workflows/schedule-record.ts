import { z } from 'zod';
import { defineRecordKind, scheduleSpecSchema } from '../schemas/index.js';

/**
 * A schedule as stored (decision 0036), in its hash beside what its fires decided. Version 1. `source` says
 * who made it: the config (created or updated by id when a process starts) or the API.
 */
export const scheduleRecordSchema = z.strictObject({
  v: z.literal(1),
  spec: scheduleSpecSchema,
  source: z.enum(['config', 'api']),
  paused: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;

defineRecordKind({ name: 'schedule', version: 1, schema: scheduleRecordSchema });

/**
 * What one fire of a schedule decided, recorded once per fire time (a fire taken up again reads it): a run
 * started (its id), a fire skipped and why, or a fire waiting for the previous run (`overlap: queue`).
 */
export type FireDecision =
  | { kind: 'run'; runId: string }
  | { kind: 'skip'; reason: FireSkipReason }
  | { kind: 'wait' };

export type FireSkipReason = 'paused' | 'missed' | 'overlap' | 'queue_full';

/** The decision as its hash field holds it: `run:<id>`, `skip:<reason>`, `wait`. */
export function encodeFireDecision(decision: FireDecision): string {
  switch (decision.kind) {
    case 'run':
      return `run:${decision.runId}`;
    case 'skip':
      return `skip:${decision.reason}`;
    case 'wait':
      return 'wait';
    default: {
      const unknown: never = decision;
      throw new Error(`unknown fire decision ${JSON.stringify(unknown)}`);
    }
  }
}

const skipReasons: readonly FireSkipReason[] = ['paused', 'missed', 'overlap', 'queue_full'];

export function decodeFireDecision(text: string): FireDecision {
  if (text === 'wait') return { kind: 'wait' };
  if (text.startsWith('run:')) return { kind: 'run', runId: text.slice(4) };
  const reason = text.slice(5) as FireSkipReason;
  if (text.startsWith('skip:') && skipReasons.includes(reason)) return { kind: 'skip', reason };
  throw new Error(`not a fire decision: ${text}`);
}
