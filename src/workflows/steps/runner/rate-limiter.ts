/** A provider's shared limits, as its config states them. */
export interface RateLimits {
  rpm: number;
  inputTpm: number;
  outputTpm: number;
  /** Input plus output tokens per window (a tenant's `tokens_per_minute`, decision 0038); 0 or absent: none. */
  totalTpm?: number;
  /** Length of the sliding window the limits apply to (a minute unless a test or a provider says otherwise). */
  windowMs?: number;
}

export type Admission = { admitted: true } | { admitted: false; waitMs: number };

/**
 * The limits a model call is made within, shared by every worker process and machine, per provider (one API
 * key and model): requests and input/output tokens per sliding window, and a cool-down that holds everyone
 * back after a 429. A step that is not admitted parks (model-call.ts).
 */
export interface RateLimiter {
  /** Reserves room for one request (idempotent per reservation id), or says how long to wait. */
  admit(
    provider: string,
    limits: RateLimits,
    reservation: { id: string; inputTokens: number; outputTokens: number },
    now: number,
  ): Promise<Admission>;
  /** Reconciles a reservation with the reported usage, and/or holds every worker back until `holdUntil`. */
  settle(
    provider: string,
    settlement: {
      reservationId?: string;
      inputTokens?: number;
      outputTokens?: number;
      holdUntil?: number;
      /** When the request completed (the reservation counts from then on). */
      now?: number;
    },
  ): Promise<void>;
}
