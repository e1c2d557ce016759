export { buildAgents, toolLookup } from './build-agents.js';
export { RatchetWorker, type RatchetWorkerOptions } from './ratchet-worker.js';
export { startWorkerProcess, type WorkerProcessOptions } from './start-worker-process.js';
