// Proves a tool of your own is crash-safe: an agent charges a card with it, once without faults, then once
// with its worker process SIGKILLed at two crash points of the tool call; every run must end the same,
// with one charge. Run it with `npx tsx examples/crash-test-my-tool.ts` against the Redis at REDIS_URL
// (default redis://127.0.0.1:6379); the model is a scripted one, so no API key is needed.
import { assertCrashSafe, crashTest, formatCrashTestReport } from '../src/testing/index.js';

const report = await crashTest({
  // Your toolboxes, as every worker of the test loads them (examples/payments-test-worker.ts).
  worker: new URL('./payments-test-worker.ts', import.meta.url),
  agent: { toolboxes: ['payments'] },
  script: {
    replies: [
      { tool_calls: [{ name: 'charge_card', arguments: { amount_cents: 4200 } }] },
      { text: 'Charged 42.00.' },
    ],
  },
  task: 'Charge 42.00 to my card',
  crashPoints: ['tool.mid_call', 'tool.before_commit'],
});
console.log(formatCrashTestReport(report));
console.log('charges:', JSON.stringify(report.reference.sideEffects));
assertCrashSafe(report); // throws, listing every difference, if a crash changed anything
