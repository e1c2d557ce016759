import type { DeliveryView } from '../redis/webhook-deliveries.js';
import type { EngineParts } from './engine-parts.js';

export type { DeliveryView as WebhookDelivery } from '../redis/webhook-deliveries.js';

/** A page of webhook deliveries, newest first; `next` is the place the next page starts after. */
export interface WebhookDeliveryPage {
  deliveries: DeliveryView[];
  next: string | null;
}

/** The deliveries, newest first, `limit` after the place `before` (`<ms>:<delivery id>`) if given. */
export function listWebhookDeliveries(
  parts: EngineParts,
  options: { limit: number; before?: string },
): Promise<WebhookDeliveryPage> {
  return parts.webhookDeliveries().list(options);
}

/**
 * Sends a delivery again now, with its webhook-id: a delivered or failed one starts over (its attempts
 * reset), one waiting for a retry is due at once. 'delivering' while an attempt is under way; undefined when
 * the delivery is unknown (or removed, 7 days after it finished).
 */
export function redeliverWebhook(
  parts: EngineParts,
  id: string,
): Promise<DeliveryView | 'delivering' | undefined> {
  return parts.webhookDeliveries().redeliver(id);
}
