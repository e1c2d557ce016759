/**
 * `npm run bench`: what Ratchet's durability costs over plain BullMQ, on one Redis, in one process.
 *
 * Measured (worker concurrency BENCH_CONCURRENCY, default 50, for raw BullMQ and Ratchet alike; each
 * measurement gets its own random key prefix, warms up, and deletes its keys at the end):
 *   A. one job vs one 1-iteration run (the model answers at once, no tools): latency from `queue.add` /
 *      `engine.startRun` until a client sees the last job completed (QueueEvents, the same for both).
 *   B. chains: a raw job that adds the next job of its chain, vs a run of N iterations where each of the
 *      first N-1 calls one `noop` tool (2N-1 jobs: N iteration jobs + N-1 tool jobs; the raw chain has as many).
 *      Per step = per job: the gap between the same point in consecutive jobs — processing start for raw;
 *      model-call start (iteration job) and tool-handler start (tool job) for Ratchet — so it spans one queue
 *      hop plus one job's processing; the first step starts at add/startRun. Per iteration: model call to
 *      model call (a tool job + an iteration job), and run time / N.
 *   Both at 1 unit in flight and at BENCH_CONCURRENCY in flight.
 *   C. takeover: a worker process is SIGKILLed mid-iteration; time until the run completes on another worker.
 * Rates are units of work over the wall time of the measured part. Targets: Ratchet's p50 per step ≤ 3× raw,
 * its throughput at full concurrency ≥ 1/3 of raw, takeover ≤ 15 s. FAIL is reported, never an exit code.
 * Sizes: BENCH_RUNS (runs or chains at full concurrency, default 200), BENCH_ITERATIONS (N, default 10).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { describeEnvironment } from './environment.js';
import { measureRatchetRuns } from './ratchet-runs.js';
import { measureRawChains } from './raw-chain.js';
import {
  formatRows,
  formatTargets,
  latencyTarget,
  type Row,
  rowOf,
  type Target,
  throughputTarget,
} from './report.js';
import type { ScenarioSize } from './scenario.js';
import { measureTakeover } from './takeover.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const runs = positiveInteger('BENCH_RUNS', 200);
const iterations = positiveInteger('BENCH_ITERATIONS', 10);
const concurrency = positiveInteger('BENCH_CONCURRENCY', 50);
const chainJobs = 2 * iterations - 1;
/** Lock settings of Ratchet's worker defaults, given to the raw worker too. */
const lock = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };
/** The job options Ratchet gives step jobs (5 step attempts + 3, kept a day). */
const rawJobOptions = {
  attempts: 8,
  removeOnComplete: { age: 86_400 },
  removeOnFail: { age: 86_400 },
};

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number ≥ 1, got "${text}"`);
  return value;
}

function sizes(parallel: number, units: number): ScenarioSize {
  return { parallel, units, warmup: Math.min(units, Math.max(10, parallel)), concurrency };
}

async function singleJobs(parallel: number, units: number): Promise<Row[]> {
  const size = sizes(parallel, units);
  const raw = await measureRawChains({ url, ...size, ...lock, length: 1, jobOptions: rawJobOptions });
  const ratchet = await measureRatchetRuns({ url, ...size, iterations: 1 });
  return [
    rowOf('raw job, add → completed', parallel, raw, raw.unitLatencies, { count: raw.jobs, unit: 'jobs/s' }),
    rowOf('Ratchet 1-iteration run, startRun → completed', parallel, ratchet, ratchet.unitLatencies, {
      count: ratchet.jobs,
      unit: 'runs/s',
    }),
  ];
}

async function chains(parallel: number, units: number): Promise<Row[]> {
  const size = sizes(parallel, units);
  const raw = await measureRawChains({ url, ...size, ...lock, length: chainJobs, jobOptions: rawJobOptions });
  const ratchet = await measureRatchetRuns({ url, ...size, iterations });
  const iterationCount = { count: ratchet.units * iterations, unit: 'iterations/s' };
  return [
    rowOf(`raw chain of ${chainJobs} jobs, per job`, parallel, raw, raw.stepGaps, {
      count: raw.jobs,
      unit: 'jobs/s',
    }),
    rowOf(`Ratchet ${iterations}-iteration run, per job`, parallel, ratchet, ratchet.stepGaps, {
      count: ratchet.jobs,
      unit: 'jobs/s',
    }),
    rowOf(
      '  per iteration, model call → model call',
      parallel,
      ratchet,
      ratchet.iterationGaps,
      iterationCount,
    ),
    rowOf(
      '  per iteration, run time / N',
      parallel,
      ratchet,
      ratchet.unitLatencies.map((latency) => latency / iterations),
      iterationCount,
    ),
  ];
}

function row(rows: readonly Row[], index: number): Row {
  const found = rows[index];
  if (!found) throw new Error(`no row ${index}`);
  return found;
}

async function main(): Promise<void> {
  const started = performance.now();
  const serialRuns = Math.max(5, Math.round(runs / 10));
  console.log(`Ratchet bench · ${await describeEnvironment(url)}`);
  console.log(
    `sizes: BENCH_RUNS=${runs} (${serialRuns} at 1 in flight), BENCH_ITERATIONS=${iterations}, ` +
      `worker concurrency ${concurrency} (raw and Ratchet, in this process), scripted model without delay`,
  );
  console.log(
    'timing: per job = gap between the same point of consecutive jobs (raw: processing start; Ratchet: model-call ' +
      'and tool-handler start, performance.now() in this process); "→ completed" = until QueueEvents reports the ' +
      'last job completed; rates = work / wall time of the measured part',
  );
  const singleSerial = await singleJobs(1, serialRuns * iterations);
  const singleParallel = await singleJobs(concurrency, runs * iterations);
  const chainSerial = await chains(1, serialRuns);
  const chainParallel = await chains(concurrency, runs);
  const takeover = await measureTakeover(url);

  console.log('');
  console.log(formatRows('A. one job vs a 1-iteration run (no tools)', [...singleSerial, ...singleParallel]));
  console.log('');
  console.log(formatRows('B. chains: one noop tool call per iteration', [...chainSerial, ...chainParallel]));
  console.log('');
  console.log(
    `C. takeover after SIGKILL (lock_duration_ms ${takeover.lockDurationMs}, stalled_interval_ms ` +
      `${takeover.stalledIntervalMs}): run ${takeover.status} ${(takeover.takeoverMs / 1000).toFixed(2)} s after the kill`,
  );
  console.log('');
  const targets: Target[] = [
    latencyTarget('p50, 1-iteration run vs job, 1 in flight', row(singleSerial, 1), row(singleSerial, 0), 3),
    latencyTarget(
      `p50, 1-iteration run vs job, ${concurrency} in flight`,
      row(singleParallel, 1),
      row(singleParallel, 0),
      3,
    ),
    latencyTarget(
      'p50 per job, tool loop vs chain, 1 in flight',
      row(chainSerial, 1),
      row(chainSerial, 0),
      3,
    ),
    latencyTarget(
      `p50 per job, tool loop vs chain, ${concurrency} in flight`,
      row(chainParallel, 1),
      row(chainParallel, 0),
      3,
    ),
    throughputTarget(
      `throughput, 1-iteration runs vs jobs, ${concurrency} in flight`,
      row(singleParallel, 1),
      row(singleParallel, 0),
      1 / 3,
    ),
    throughputTarget(
      `throughput, tool loop vs chain jobs, ${concurrency} in flight`,
      row(chainParallel, 1),
      row(chainParallel, 0),
      1 / 3,
    ),
    {
      label: 'takeover after SIGKILL',
      measured: `${(takeover.takeoverMs / 1000).toFixed(2)} s (${takeover.status})`,
      limit: '≤ 15 s',
      pass: takeover.status === 'completed' && takeover.takeoverMs <= 15_000,
    },
  ];
  console.log(formatTargets(targets));
  console.log(`\nbench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
