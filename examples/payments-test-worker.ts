// The test worker module of examples/crash-test-my-tool.ts: every worker of the crash test (the ones it
// kills too) imports it and gets the payments toolbox, on a fake payment service that writes each charge
// to the test's ledger.
import { defineTestWorker } from '../src/testing/index.js';
import { paymentsToolbox } from './payments-toolbox.js';

export default defineTestWorker(({ ledger }) => ({
  toolboxes: [
    paymentsToolbox({
      async charge(idempotencyKey, amountCents) {
        // Like the real service: one charge per key, however often it is asked.
        await ledger.recordOnce(idempotencyKey, { amount_cents: amountCents });
        return { chargeId: `ch_${amountCents}` };
      },
    }),
  ],
}));
