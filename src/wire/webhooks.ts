import { z } from 'zod';
import { decodeCursor } from './list-cursor.js';

/** Webhook deliveries on the wire (decision 0034): GET /v1/webhooks/deliveries and redeliver. */

/** The most deliveries one page holds. */
export const maxDeliveryListLimit = 100;

const limitError = `must be a whole number from 1 to ${maxDeliveryListLimit}`;

export const webhookDeliveryListQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: limitError })
    .int({ error: limitError })
    .min(1, { error: limitError })
    .max(maxDeliveryListLimit, { error: `must be at most ${maxDeliveryListLimit}` })
    .default(20)
    .describe(`How many deliveries a page holds (1 to ${maxDeliveryListLimit}, 20 when omitted).`),
  cursor: z
    .string()
    .refine((cursor) => decodeCursor('webhook_deliveries', cursor) !== undefined, {
      error: 'must be a next_cursor returned by GET /v1/webhooks/deliveries, unchanged',
    })
    .optional()
    .describe('The next_cursor of the previous page: the page goes on strictly after its last delivery.'),
});

export const webhookDeliveryStatusSchema = z
  .enum(['pending', 'retrying', 'delivering', 'delivered', 'failed'])
  .describe(
    'pending: waiting for its first attempt; retrying: an attempt failed, the next is due at next_attempt_at; delivering: an attempt is under way; delivered: the receiver answered 2xx; failed: given up (every retry spent, or refused for good, e.g. a private address).',
  );

export const webhookDeliverySchema = z
  .strictObject({
    id: z.string().describe('The delivery: one per webhook and event.'),
    webhook: z.string().describe("The webhook's id in the config."),
    type: z.string().describe('The webhook event type (run_completed, approval_requested …).'),
    message_id: z
      .string()
      .describe('The webhook-id header: the same on every attempt, for receivers to dedupe.'),
    session_id: z.string(),
    run_id: z.string(),
    event_id: z.string().describe("The event's id in its session's event stream."),
    status: webhookDeliveryStatusSchema,
    attempts: z.number().int().nonnegative().describe('Attempts finished (delivered or failed).'),
    max_attempts: z.number().int().positive(),
    last_error: z.string().nullable().describe('Why the last failed attempt failed.'),
    next_attempt_at: z.string().nullable().describe('When the next attempt is due (status retrying).'),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One event sent, or to be sent, to one webhook.' });

export type WebhookDelivery = z.output<typeof webhookDeliverySchema>;

export const webhookDeliveryListSchema = z.strictObject({
  deliveries: z.array(webhookDeliverySchema),
  next_cursor: z
    .string()
    .nullable()
    .describe('Pass it as cursor= for the next page; null when there is nothing more.'),
});

export type WebhookDeliveryList = z.output<typeof webhookDeliveryListSchema>;

export const webhookDeliveryParamsSchema = z.strictObject({
  id: z.string().regex(/^[a-zA-Z][\w-]{0,63}\.ses_[0-9a-z]{16}\.\d{1,20}-\d{1,20}$/, {
    error: 'must be the id of a delivery, as GET /v1/webhooks/deliveries lists it',
  }),
});
