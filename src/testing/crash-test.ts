import { type CrashPointName, crashPointNames } from '../workflows/index.js';
import { type CrashDifference, type CrashTestReference, compareWithReference } from './crash-differences.js';
import type { LedgerEntry } from './ledger.js';
import {
  createTestEngine,
  type ModelCall,
  type TestEngine,
  type TestEngineOptions,
  type TestTask,
} from './test-engine.js';
import type { WorkerProcess } from './worker-process.js';

export type { CrashTestReference };

/**
 * The crash points a worker's steps can reach (the ones an API reaches, `steer.*` and `submit.*`, and the
 * webhook dispatcher's, `webhook.*`, are left out): where a crash test kills its worker by default.
 */
export const workerCrashPoints: readonly CrashPointName[] = crashPointNames.filter(
  (point) => !point.startsWith('steer.') && !point.startsWith('submit.') && !point.startsWith('webhook.'),
);

export interface CrashTestOptions extends TestEngineOptions {
  /** What to run: an input for the entry agent, or an input and the agent or team to run it. */
  task: string | TestTask;
  /**
   * Where to kill the worker, one run each: `point` (its first time) or `point@N` (its N-th time, e.g. the
   * second iteration's model call). Default: every worker crash point (`workerCrashPoints`). A point the
   * run never reaches is reported as not reached, not as a difference.
   */
  crashPoints?: readonly string[];
  /**
   * Model calls a kill may cost beyond the run without faults: a step whose reply was not yet recorded asks
   * again. Default 1 (one step in flight); give more when several steps run at once (team members).
   */
  extraModelCallsPerKill?: number;
  /** Bound of one run, from its start to its end (default 30 s). */
  runTimeoutMs?: number;
  /**
   * Bound of the whole test (default 5 minutes): crash points not started by then are reported as not run,
   * which is a difference.
   */
  timeoutMs?: number;
}

/** One run with its worker killed at a crash point. */
export interface CrashOutcome {
  crashAt: string;
  /** Whether the worker reached the point (and was killed there). */
  reached: boolean;
  differences: CrashDifference[];
  modelCalls: number;
  durationMs: number;
}

/** What a crash test found. `ok` when no crash made any difference. */
export interface CrashTestReport {
  ok: boolean;
  reference: CrashTestReference;
  crashes: CrashOutcome[];
  /** Every difference of every crash, in order. */
  differences: CrashDifference[];
  durationMs: number;
}

const defaultTimeoutMs = 300_000;

/**
 * Runs a task once without faults (its worker in this process), then once per crash point with a worker
 * process that SIGKILLs itself there and a fresh worker (in this process) that takes over, each on a test
 * engine of its own. Reports every way a
 * crashed run differs from the run without faults: its status and result, a run's chat or events, the runs
 * of the tree, something stored twice, the side effects your tools recorded in the ledger, and model calls
 * beyond one per kill. Throws only when the run without faults does not finish (the scenario is broken).
 */
export async function crashTest(options: CrashTestOptions): Promise<CrashTestReport> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const runTimeoutMs = options.runTimeoutMs ?? 30_000;
  const points = options.crashPoints ?? workerCrashPoints;
  // Each crash's engine and worker process are made ready while the one before runs: starting a worker
  // process (loading Ratchet and your module) is most of what a crash point costs.
  const prepare = (index: number) => {
    const crashAt = points[index];
    return crashAt === undefined ? undefined : prepareCrash(options, crashAt);
  };
  let next = prepare(0);
  try {
    const reference = await referenceRun(options, runTimeoutMs);
    const crashes: CrashOutcome[] = [];
    for (let index = 0; index < points.length; index += 1) {
      const crashAt = points[index] as string;
      const prepared = next;
      next = undefined;
      if (Date.now() - started > timeoutMs || prepared === undefined) {
        await prepared?.then((crash) => crash.test.close());
        const detail = `not run: the crash test passed its ${timeoutMs} ms bound`;
        crashes.push({
          crashAt,
          reached: false,
          differences: [{ crashAt, kind: 'timeout', detail }],
          modelCalls: 0,
          durationMs: 0,
        });
        continue;
      }
      crashes.push(
        await crashedRun(await prepared, options, reference, runTimeoutMs, () => {
          next = prepare(index + 1);
        }),
      );
    }
    const differences = crashes.flatMap((crash) => crash.differences);
    return {
      ok: differences.length === 0,
      reference,
      crashes,
      differences,
      durationMs: Date.now() - started,
    };
  } finally {
    await next?.then((crash) => crash.test.close());
  }
}

interface PreparedCrash {
  crashAt: string;
  test: TestEngine;
  /** Loading, held until the run starts. */
  doomed: WorkerProcess;
}

async function prepareCrash(options: CrashTestOptions, crashAt: string): Promise<PreparedCrash> {
  const test = await createTestEngine(options);
  return { crashAt, test, doomed: test.spawnWorker({ crashAt, held: true }) };
}

async function referenceRun(options: CrashTestOptions, runTimeoutMs: number): Promise<CrashTestReference> {
  const started = Date.now();
  const test = await createTestEngine(options);
  try {
    await test.startWorker();
    const { runId, sessionId } = await test.start(options.task);
    const run = await test.engine.waitForRun(runId, { timeoutMs: runTimeoutMs });
    if (!isFinished(run.status)) {
      throw new Error(
        `the run without faults did not finish within ${runTimeoutMs} ms (status ${run.status})`,
      );
    }
    const read = await test.snapshot(sessionId, runId);
    if (read.duplicates.length > 0) {
      throw new Error(`the run without faults stored something twice: ${read.duplicates.join('; ')}`);
    }
    const sideEffects = await sideEffectsOf(test, read.rename);
    return {
      snapshot: read.snapshot,
      sideEffects,
      modelCalls: test.modelCalls().length,
      durationMs: Date.now() - started,
    };
  } finally {
    await test.close();
  }
}

async function crashedRun(
  prepared: PreparedCrash,
  options: CrashTestOptions,
  reference: CrashTestReference,
  runTimeoutMs: number,
  /** Called once the worker is dead (or the run finished): the next crash may get ready. */
  onWorkerGone: () => void,
): Promise<CrashOutcome> {
  const started = Date.now();
  const { crashAt, test, doomed } = prepared;
  const outcome = (reached: boolean, differences: CrashDifference[]): CrashOutcome => ({
    crashAt,
    reached,
    differences,
    modelCalls: test.modelCalls().length,
    durationMs: Date.now() - started,
  });
  const workerProblem = (detail: string): CrashDifference[] => [{ crashAt, kind: 'worker', detail }];
  try {
    const { runId, sessionId } = await test.start(options.task);
    doomed.release();
    const stopWaiting = new AbortController();
    const finishedFirst = await Promise.race([
      doomed.exited.then(() => false),
      test.engine
        .waitForRun(runId, { timeoutMs: runTimeoutMs, signal: stopWaiting.signal })
        .then((run) => isFinished(run.status)),
    ]);
    stopWaiting.abort();
    onWorkerGone();
    const exit = finishedFirst ? await doomed.stop() : await doomed.exited;
    // A point at the very end of a run (its last commit) may be reached after the run shows finished.
    const killed =
      exit.signal === 'SIGKILL' && doomed.output().includes(`crash point ${crashAt.split('@')[0]} reached`);
    if (!finishedFirst) {
      if (!killed) {
        return outcome(
          false,
          workerProblem(
            `the worker exited (code ${exit.code}, signal ${exit.signal}) without reaching the crash point:\n${tail(doomed.output())}`,
          ),
        );
      }
      // The worker that takes over runs in this process: it has nothing to prove by dying, and starts at once.
      await test.startWorker();
    }
    const run = await test.engine.waitForRun(runId, { timeoutMs: runTimeoutMs });
    if (!isFinished(run.status)) {
      return outcome(
        killed,
        workerProblem(
          `the run did not finish within ${runTimeoutMs} ms after the crash (status ${run.status})`,
        ),
      );
    }
    const read = await test.snapshot(sessionId, runId);
    const differences = compareWithReference({
      crashAt,
      reference,
      snapshot: read.snapshot,
      duplicates: read.duplicates,
      sideEffects: await sideEffectsOf(test, read.rename),
      modelCalls: test.modelCalls().length,
      allowedModelCalls: reference.modelCalls + (killed ? (options.extraModelCallsPerKill ?? 1) : 0),
      askedAgain: askedAgain(test.modelCalls(), read.rename),
    });
    return outcome(killed, differences);
  } finally {
    await test.close();
  }
}

/** The ledger with run ids replaced by run names, so the ledgers of two executions compare. */
async function sideEffectsOf(test: TestEngine, rename: (text: string) => string): Promise<LedgerEntry[]> {
  return (await test.ledger.entries()).map(
    (entry) => JSON.parse(rename(JSON.stringify(entry))) as LedgerEntry,
  );
}

/** The steps whose model was asked more than once, named by run (`root/writer iteration 2`). */
function askedAgain(calls: readonly ModelCall[], rename: (text: string) => string): string[] {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const step = `${rename(call.run_id)} iteration ${call.iteration}${call.purpose === 'summary' ? ' (summary)' : ''}`;
    counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  return [...counts].filter(([, count]) => count > 1).map(([step]) => step);
}

function isFinished(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

function tail(output: string): string {
  return output.length > 2000 ? `…${output.slice(-2000)}` : output;
}
