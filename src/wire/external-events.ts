import { z } from 'zod';
// The schemas module itself: the wire is shared with the typed client, which runs in browsers too.
import {
  boundedJsonValue,
  eventIdSchema,
  eventNameSchema,
  externalEventLimits,
} from '../schemas/external-events.js';

/** Events from outside on the wire (decision 0033): POST /v1/events and POST /v1/runs/:id/signal. */

const payloadSchema = boundedJsonValue(externalEventLimits.payloadBytes, 'payload').describe(
  `Any JSON value, at most ${externalEventLimits.payloadBytes} bytes: what a waiting run's wait_for_event returns.`,
);

export const sendEventBodySchema = z.strictObject({
  event: eventNameSchema.describe('The name runs wait for (wait_for_event) and triggers start on.'),
  payload: payloadSchema.optional(),
  id: eventIdSchema
    .optional()
    .describe('Makes delivery idempotent: the same id again delivers nothing new (made when absent).'),
});
export type SendEventBody = z.output<typeof sendEventBodySchema>;
/** What POST /v1/events takes (the typed client's `sendEvent`). */
export type SendEventInput = z.input<typeof sendEventBodySchema>;

export const triggeredRunSchema = z
  .strictObject({
    trigger: z.number().int().nonnegative().describe("The trigger's place in the config's `triggers`."),
    agent: z.string(),
    run_id: z.string(),
    session_id: z.string(),
    started: z.boolean().describe('False when an earlier copy of the event started it.'),
  })
  .meta({ id: 'TriggeredRun' });

export const sentEventSchema = z
  .strictObject({
    id: z.string(),
    duplicate: z.boolean().describe('An event with this id was sent before: nothing new was kept.'),
    woken: z.number().int().nonnegative().describe('Waiting steps of runs woken to look at it.'),
    runs: z.array(triggeredRunSchema).describe("The runs of the triggers of the event's name."),
  })
  .meta({ id: 'SentEvent' });
export type SentEvent = z.output<typeof sentEventSchema>;

export const signalRunBodySchema = z.strictObject({
  event: eventNameSchema.describe("The name the run's wait_for_event waits for."),
  payload: payloadSchema.optional(),
  id: eventIdSchema
    .optional()
    .describe('Makes delivery idempotent: the same id again delivers nothing new (made when absent).'),
});
export type SignalRunBody = z.output<typeof signalRunBodySchema>;
/** What POST /v1/runs/:id/signal takes (the typed client's `signal`). */
export type SignalRunInput = z.input<typeof signalRunBodySchema>;

export const sentSignalSchema = z
  .strictObject({
    id: z.string(),
    duplicate: z.boolean(),
    woken: z.number().int().nonnegative(),
  })
  .meta({ id: 'SentSignal' });
export type SentSignal = z.output<typeof sentSignalSchema>;
