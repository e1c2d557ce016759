import '../models/index.js';
import { builtinToolboxes } from '../tools/builtin/index.js';
import { startWorkerProcess } from './start-worker-process.js';

await startWorkerProcess({ argv: process.argv.slice(2), toolboxes: builtinToolboxes() });
