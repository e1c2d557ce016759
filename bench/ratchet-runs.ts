import { performance } from 'node:perf_hooks';
import type { Engine } from '../src/engine/index.js';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';
import { shardPrefix, stepQueueName } from '../src/redis/keys.js';
import { RatchetWorker } from '../src/worker/index.js';
import { stepJobId } from '../src/workflows/ids.js';
import { benchConfig, toolLoopReplies } from './bench-config.js';
import { createBenchEngine } from './bench-engine.js';
import { startCpuMeter } from './cpu-meter.js';
import { JobCompletions } from './job-completions.js';
import { markedScriptedKind, registerMarkedScripted } from './marked-model.js';
import { noopToolbox, noopToolboxName } from './noop-toolbox.js';
import type { ScenarioResult, ScenarioSize } from './scenario.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { runInSlots } from './slots.js';
import { gaps } from './stats.js';
import type { StepMarks } from './step-marks.js';
import { telemetrySink } from './telemetry-sink.js';

export interface RatchetRunsOptions extends ScenarioSize {
  url: string;
  /** Iterations per run: `iterations - 1` with one noop tool call each, then the final answer. */
  iterations: number;
  /** More keys of the worker section (the defaults otherwise). */
  worker?: Record<string, unknown>;
}

interface MeasuredRun {
  runId: string;
  start: number;
  end: number;
}

/**
 * Ratchet runs against an in-process RatchetWorker. Marks are taken when each model call starts (iteration
 * jobs) and each noop handler starts (tool jobs); a run's first mark is taken just before `startRun`.
 */
export async function measureRatchetRuns(options: RatchetRunsOptions): Promise<ScenarioResult> {
  const prefix = scratchPrefix();
  const marks: StepMarks = new Map();
  registerMarkedScripted(marks);
  const loaded = benchConfig({
    url: options.url,
    prefix,
    providerKind: markedScriptedKind,
    replies: toolLoopReplies(options.iterations),
    toolboxes: options.iterations > 1 ? [noopToolboxName] : [],
    maxIterations: options.iterations,
    concurrency: options.concurrency,
    telemetry: (await telemetrySink())?.config,
    worker: options.worker,
  });
  const logger = silentLogger();
  const worker = new RatchetWorker({ loaded, toolboxes: [noopToolbox(marks)], logger });
  const redis = createRedis({ url: options.url, logger, name: 'bench-engine' });
  const engine = createBenchEngine(loaded, redis);
  const space = engine.space;
  const completions = await JobCompletions.open({
    url: options.url,
    prefix: shardPrefix(space, 0),
    queueName: stepQueueName,
  });
  const runs: MeasuredRun[] = [];
  const runOne = async (measured: boolean): Promise<void> => {
    const start = performance.now();
    const { runId } = await engine.startRun({ input: 'go' });
    const end = await completions.wait(stepJobId.iteration(runId, options.iterations), 60_000);
    if (measured) runs.push({ runId, start, end });
  };
  try {
    await worker.start();
    await runInSlots(options.warmup, options.parallel, () => runOne(false));
    const stopCpuMeter = await startCpuMeter(options.url);
    const started = performance.now();
    await runInSlots(options.units, options.parallel, () => runOne(true));
    const wallMs = performance.now() - started;
    const cpu = await stopCpuMeter();
    await checkCompleted(engine, runs, options.iterations);
    return summarizeRuns(runs, marks, options.iterations, { wallMs, cpu });
  } finally {
    await worker.close();
    await completions.close();
    await engine.close();
    await closeRedis(redis);
    await deleteScratchKeys(options.url, prefix);
  }
}

/** A run that did not end as scripted would make its timings meaningless: fail the bench loudly. */
async function checkCompleted(
  engine: Engine,
  runs: readonly MeasuredRun[],
  iterations: number,
): Promise<void> {
  for (const { runId } of runs) {
    const run = await engine.getRun(runId);
    if (run?.status !== 'completed' || run.iteration !== iterations) {
      throw new Error(
        `run ${runId} ended ${run?.status} after ${run?.iteration} iterations, not completed after ${iterations}`,
      );
    }
  }
}

function summarizeRuns(
  runs: readonly MeasuredRun[],
  marks: StepMarks,
  iterations: number,
  timing: Pick<ScenarioResult, 'wallMs' | 'cpu'>,
): ScenarioResult {
  const jobsPerRun = 2 * iterations - 1;
  const stepGaps: number[] = [];
  const iterationGaps: number[] = [];
  for (const run of runs) {
    const runMarks = marks.get(run.runId) ?? [];
    if (runMarks.length !== jobsPerRun) {
      throw new Error(
        `run ${run.runId} has ${runMarks.length} step marks, expected ${jobsPerRun} (a step ran twice?)`,
      );
    }
    stepGaps.push(...gaps([run.start, ...runMarks]));
    // Model calls are every other mark: iteration k+1's call minus iteration k's spans one tool job and one iteration job.
    iterationGaps.push(...gaps(runMarks.filter((_mark, index) => index % 2 === 0)));
  }
  return {
    units: runs.length,
    jobs: runs.length * jobsPerRun,
    ...timing,
    unitLatencies: runs.map((run) => run.end - run.start),
    stepGaps,
    iterationGaps,
  };
}
