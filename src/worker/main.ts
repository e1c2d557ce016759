import '../models/index.js';
import { startWorkerProcess } from './start-worker-process.js';

await startWorkerProcess({ argv: process.argv.slice(2), toolboxes: [] });
