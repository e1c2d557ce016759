// `ratchet/testing`: run your own tools through the crashes Ratchet's own suites put it through.
// docs/testing.md describes each export.

export type { Script, ScriptedReply, ScriptedRule, ScriptedToolCall } from '../models/scripted/index.js';
export { type CrashDifference, compareWithReference } from './crash-differences.js';
export {
  type CrashOutcome,
  type CrashTestOptions,
  type CrashTestReference,
  type CrashTestReport,
  crashTest,
  workerCrashPoints,
} from './crash-test.js';
export { assertCrashSafe, CrashTestError, formatCrashTestReport } from './crash-test-error.js';
export type { Ledger, LedgerEntry } from './ledger.js';
export type { RunTreeRead, RunTreeSnapshot } from './run-snapshot.js';
export {
  createTestEngine,
  type ModelCall,
  type TestEngine,
  type TestEngineOptions,
  type TestTask,
} from './test-engine.js';
export {
  defineTestWorker,
  type TestWorkerContext,
  type TestWorkerFactory,
  type TestWorkerSetup,
} from './test-worker.js';
export type { WorkerProcess } from './worker-process.js';
