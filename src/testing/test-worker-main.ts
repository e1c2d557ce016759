// The process of a test engine's worker (`ratchet/testing`): a Ratchet worker with the toolboxes of the
// test worker module named by RATCHET_TEST_WORKER_MODULE, and the ledger of the test engine whose prefix is
// RATCHET_TEST_PREFIX on RATCHET_TEST_REDIS_URL. Crash points come from RATCHET_CRASH_AT.
// An unsupported Node.js is refused and signals are caught before the rest loads, as in src/worker/main.ts.
import { refuseUnsupportedNode } from '../worker/node-version.js';
import { catchShutdownSignals } from '../worker/shutdown-signals.js';

refuseUnsupportedNode();
catchShutdownSignals();
await import('../models/index.js');
const { startTestWorkerProcess } = await import('./test-worker-process.js');
await startTestWorkerProcess(process.argv.slice(2), process.env);
