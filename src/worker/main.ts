// The worker process's entry. An unsupported Node.js is refused first, with one line, and then signals are
// caught before anything else loads (loading takes a second or more): a SIGTERM during start-up is then a
// clean, logged exit 0 instead of death by the signal. Everything else is imported after both.
import { refuseUnsupportedNode } from './node-version.js';
import { catchShutdownSignals } from './shutdown-signals.js';

refuseUnsupportedNode();
catchShutdownSignals();
await import('../models/index.js');
const { startWorkerProcess } = await import('./start-worker-process.js');
await startWorkerProcess({ argv: process.argv.slice(2), toolboxes: [] });
