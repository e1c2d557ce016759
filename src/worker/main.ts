// The worker process's entry. Signals are caught before anything else loads (loading takes a second or
// more): a SIGTERM during start-up is then a clean, logged exit 0 instead of death by the signal.
import { catchShutdownSignals } from './shutdown-signals.js';

catchShutdownSignals();
await import('../models/index.js');
const { startWorkerProcess } = await import('./start-worker-process.js');
await startWorkerProcess({ argv: process.argv.slice(2), toolboxes: [] });
