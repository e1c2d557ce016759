import type { WebhookEventType } from '../../config/index.js';
import type { RatchetEvent } from '../../events/event.js';

/** The webhook event type an event is heard as, or undefined for events no webhook hears of. */
export function webhookTypeOf(event: RatchetEvent): WebhookEventType | undefined {
  switch (event.kind) {
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
      return event.kind;
    case 'ask_user':
      return questionTypes[event.data.kind];
    default:
      return undefined;
  }
}

const questionTypes = {
  ask_user: 'ask_user',
  approval: 'approval_requested',
  budget: 'budget_requested',
} as const satisfies Record<string, WebhookEventType>;

/**
 * The body of a delivery, as the Standard Webhooks specification shapes it: `type`, `timestamp` (when the
 * event happened) and `data` (the event's session, run, agent, stream id and its own data). Built from the
 * stored event alone, so every attempt sends the same bytes.
 */
export function webhookPayload(type: WebhookEventType, event: RatchetEvent, sessionId: string): string {
  return JSON.stringify({
    type,
    timestamp: event.time,
    data: {
      session_id: sessionId,
      run_id: event.run_id,
      agent: event.agent,
      event_id: event.id,
      event: event.kind,
      ...event.data,
    },
  });
}

/** Retries double from the base up to this delay, then keep it. */
export const maxRetryDelayMs = 3_600_000;
/** Deliveries are retried for at least this long after the first attempt. */
export const retryWindowMs = 86_400_000;

/** The delay before attempt `attemptsMade + 1`: the base, doubled for each attempt after the first, capped. */
export function retryDelayMs(baseMs: number, attemptsMade: number): number {
  const doublings = Math.min(Math.max(attemptsMade - 1, 0), 40);
  return Math.min(baseMs * 2 ** doublings, maxRetryDelayMs);
}

/** How many attempts in all make the retries span at least retryWindowMs. */
export function deliveryAttempts(baseMs: number): number {
  let waited = 0;
  let attempts = 1;
  while (waited < retryWindowMs) {
    waited += retryDelayMs(baseMs, attempts);
    attempts += 1;
  }
  return attempts;
}
