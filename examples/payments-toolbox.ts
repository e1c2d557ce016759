// A tool of your own: `charge_card` charges through a payment service that deduplicates charges by an
// idempotency key (as Stripe's API does). The service is given to the toolbox, so a test can give a fake.
import { z } from 'zod';
import { createToolBox, defineTool, type ToolBox } from '../src/index.js';

/** The part of the payment service the tool uses. */
export interface Payments {
  /** Charges once per idempotency key: a second request with the same key returns the first charge. */
  charge(idempotencyKey: string, amountCents: number): Promise<{ chargeId: string }>;
}

export function paymentsToolbox(payments: Payments): ToolBox {
  return createToolBox('payments', [
    defineTool({
      name: 'charge_card',
      description: "Charges the customer's card.",
      inputSchema: z.strictObject({ amount_cents: z.number().int().positive() }),
      // Safe to run again after a crash, because the service deduplicates by the key Ratchet gives.
      idempotent: true,
      handler: async (context, input) => payments.charge(context.idempotencyKey, input.amount_cents),
    }),
  ]);
}
