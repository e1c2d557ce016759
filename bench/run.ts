/**
 * `npm run bench`: what Ratchet's durability costs over plain BullMQ, on one Redis, in one process.
 *
 * Worker concurrency is BENCH_CONCURRENCY (default 50) for raw BullMQ and Ratchet alike. Each measurement gets
 * its own random key prefix, warms up on the same worker first, and deletes its keys at the end.
 *   A. One job vs one 1-iteration run (the scripted model answers at once, no tools): latency from
 *      `queue.add` / `engine.startRun` until a client sees the last job completed (QueueEvents for both).
 *   B. Chains: a raw job that adds the next job of its chain, vs a run of N iterations whose first N-1 each
 *      call one `noop` tool: 2N-1 jobs (N iteration jobs + N-1 tool jobs), as many as the raw chain has.
 *      Per job: the gap between the same point of consecutive jobs (raw: processing start; Ratchet: model-call
 *      start in iteration jobs, tool-handler start in tool jobs; `performance.now()` in this process), so it
 *      spans one queue hop plus one job's processing; the first gap starts at add/startRun. Per iteration:
 *      model call → model call (a tool job + an iteration job), and run time / N.
 *   A and B run at 1 unit in flight and at BENCH_CONCURRENCY units in flight.
 *   C. Takeover: BENCH_TAKEOVERS (default 10) worker processes, one after another, each holding one run's first iteration, are
 *      SIGKILLed at delays spread over one lock renewal period; the time from the kill until the run
 *      completes on a worker in this process, with the config's default lock settings.
 *   D. Context: one run of BENCH_LONG_ITERATIONS (default 100) iterations whose tool results are 4,000
 *      characters, with the effects off and with the default effects: tokens sent per iteration.
 *   E. Scaling: 1, 2 and 4 worker processes on one Redis (BENCH_SCALING_RUNS runs per worker, default 50), with a
 *      model that answers after 50 ms (concurrency-bound) and at once (CPU-bound): runs/s, p50/p99 per
 *      iteration, ratio to 1 worker, Redis CPU per step, Redis memory per finished run before and after
 *      retention. See bench/scaling.ts.
 *   F. Fairness (issue 35): tenant A submits BENCH_FAIRNESS_RUNS (default 2,000) one-iteration runs, then tenant
 *      B 20; B's p95 wait before its model call against the same 20 on an idle deployment, and B's share of
 *      the model calls while both had work, with fair admission off (today) and on. See bench/fairness.ts.
 *      BENCH_FAIRNESS_CONCURRENCY (20): the worker's concurrency and the admission cap.
 * Rates are work done over the wall time of the measured part. Targets: Ratchet's p50 per step (= per job)
 * ≤ 3× raw, its throughput at full concurrency ≥ 1/3 of raw; issue 37's for the tool loop: ≤ 2× raw at 1 and
 * at full concurrency, throughput ≥ 1/2 of raw; takeover p95 ≤ 0.5 s. FAIL is reported, never turned
 * into an exit code: this is a measurement. Sizes: BENCH_RUNS (runs or chains at full concurrency, default
 * 200; a tenth at 1 in flight), BENCH_ITERATIONS (N, default 10).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { contextTarget, formatContextTokens, measureContextTokens } from './context-tokens.js';
import { positiveInteger } from './env-size.js';
import { describeEnvironment } from './environment.js';
import { type FairnessResult, fairnessTargets, formatFairness, measureFairnessRounds } from './fairness.js';
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
import { formatScaling, measureScaling, type ScalingResult, scalingTarget } from './scaling.js';
import type { ScenarioSize } from './scenario.js';
import { measureTakeover, type TakeoverResult } from './takeover.js';
import { formatTakeovers, takeoverLimitMs, takeoverTarget } from './takeover-report.js';
import { telemetryOn, telemetrySink } from './telemetry-sink.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const runs = positiveInteger('BENCH_RUNS', 200);
const iterations = positiveInteger('BENCH_ITERATIONS', 10);
const concurrency = positiveInteger('BENCH_CONCURRENCY', 50);
const takeovers = positiveInteger('BENCH_TAKEOVERS', 10);
const longRun = positiveInteger('BENCH_LONG_ITERATIONS', 100);
/** Runs per worker process in section E: the same number of waves of runs at every worker count. */
const scalingRuns = positiveInteger('BENCH_SCALING_RUNS', 50);
/** Section F: the runs tenant A submits before tenant B's 20. */
const fairnessOptions = {
  url,
  heavyRuns: positiveInteger('BENCH_FAIRNESS_RUNS', 2000),
  lightRuns: 20,
  /** Worker concurrency and `admission.max_active_runs`: 20, B's whole batch (docs/scaling.md, fair shares). */
  concurrency: positiveInteger('BENCH_FAIRNESS_CONCURRENCY', 20),
  modelDelayMs: 20,
};
const chainJobs = 2 * iterations - 1;
/** Lock settings of Ratchet's worker defaults, given to the raw worker too. */
const lock = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };
/** The job options Ratchet gives step jobs (5 step attempts + 3, kept a day). */
const rawJobOptions = {
  attempts: 8,
  removeOnComplete: { age: 86_400 },
  removeOnFail: { age: 86_400 },
};

function sizes(parallel: number, units: number): ScenarioSize {
  return { parallel, units, warmup: Math.min(units, Math.max(10, parallel)), concurrency };
}

interface SingleJobRows {
  raw: Row;
  ratchet: Row;
}

async function singleJobs(parallel: number, units: number): Promise<SingleJobRows> {
  const size = sizes(parallel, units);
  const raw = await measureRawChains({ url, ...size, ...lock, length: 1, jobOptions: rawJobOptions });
  const ratchet = await measureRatchetRuns({ url, ...size, iterations: 1 });
  return {
    raw: rowOf('raw job, add → completed', parallel, raw, raw.unitLatencies, {
      count: raw.jobs,
      unit: 'jobs/s',
    }),
    ratchet: rowOf(
      'Ratchet 1-iteration run, startRun → completed',
      parallel,
      ratchet,
      ratchet.unitLatencies,
      {
        count: ratchet.jobs,
        unit: 'runs/s',
      },
    ),
  };
}

interface ChainRows {
  raw: Row;
  ratchet: Row;
  /** Ratchet per iteration, model call → model call. */
  cycle: Row;
  /** Ratchet per iteration, each run's time / N. */
  runShare: Row;
}

async function chains(parallel: number, units: number): Promise<ChainRows> {
  const size = sizes(parallel, units);
  const raw = await measureRawChains({ url, ...size, ...lock, length: chainJobs, jobOptions: rawJobOptions });
  const ratchet = await measureRatchetRuns({ url, ...size, iterations });
  const iterationCount = { count: ratchet.units * iterations, unit: 'iterations/s' };
  const jobCount = { count: ratchet.jobs, unit: 'jobs/s' };
  const runShares = ratchet.unitLatencies.map((latency) => latency / iterations);
  return {
    raw: rowOf(`raw chain of ${chainJobs} jobs, per job`, parallel, raw, raw.stepGaps, jobCount),
    ratchet: rowOf(
      `Ratchet ${iterations}-iteration run, per job`,
      parallel,
      ratchet,
      ratchet.stepGaps,
      jobCount,
    ),
    cycle: rowOf(
      '  per iteration, model call → model call',
      parallel,
      ratchet,
      ratchet.iterationGaps,
      iterationCount,
    ),
    runShare: rowOf(
      '  per iteration, run time / N (over runs)',
      parallel,
      ratchet,
      runShares,
      iterationCount,
    ),
  };
}

/** The tool loop against the raw chain: p50 per job at 1 and at full concurrency, and throughput at full. */
function toolLoopTargets(
  chain: { serial: ChainRows; parallel: ChainRows },
  limits: { ratio: number; share: number },
  tag = '',
): Target[] {
  const full = `${concurrency} in flight`;
  const { serial, parallel } = chain;
  return [
    latencyTarget(
      `p50 per job, tool loop vs chain, 1 in flight${tag}`,
      serial.ratchet,
      serial.raw,
      limits.ratio,
    ),
    latencyTarget(
      `p50 per job, tool loop vs chain, ${full}${tag}`,
      parallel.ratchet,
      parallel.raw,
      limits.ratio,
    ),
    throughputTarget(
      `throughput, tool loop vs chain, ${full}${tag}`,
      parallel.ratchet,
      parallel.raw,
      limits.share,
    ),
  ];
}

function targetsOf(
  single: { serial: SingleJobRows; parallel: SingleJobRows },
  chain: { serial: ChainRows; parallel: ChainRows },
  takeoverResults: readonly TakeoverResult[],
  context: Target,
  scaling: readonly ScalingResult[],
  fairness: readonly FairnessResult[],
): Target[] {
  const full = `${concurrency} in flight`;
  return [
    latencyTarget('p50, 1-iteration run vs job, 1 in flight', single.serial.ratchet, single.serial.raw, 3),
    latencyTarget(`p50, 1-iteration run vs job, ${full}`, single.parallel.ratchet, single.parallel.raw, 3),
    throughputTarget(
      `throughput, 1-iteration runs vs jobs, ${full}`,
      single.parallel.ratchet,
      single.parallel.raw,
      1 / 3,
    ),
    ...toolLoopTargets(chain, { ratio: 3, share: 1 / 3 }),
    // Issue 37's own targets for the same rows, stricter than the first round's.
    ...toolLoopTargets(chain, { ratio: 2, share: 1 / 2 }, ' (issue 37)'),
    takeoverTarget(takeoverResults, takeoverLimitMs),
    context,
    scalingTarget(scaling),
    ...fairnessTargets(fairness),
  ];
}

async function main(): Promise<void> {
  const started = performance.now();
  const serialRuns = Math.max(5, Math.round(runs / 10));
  console.log(`Ratchet bench · ${await describeEnvironment(url)}`);
  console.log(
    telemetryOn
      ? 'telemetry: on (BENCH_TELEMETRY=on): spans exported to an OTLP/HTTP receiver in this process, worker metrics served (sections A and B)'
      : 'telemetry: off (BENCH_TELEMETRY=on turns it on for sections A and B)',
  );
  console.log(
    `sizes: BENCH_RUNS=${runs} (${serialRuns} at 1 in flight), BENCH_ITERATIONS=${iterations}, ` +
      `worker concurrency ${concurrency} (raw and Ratchet, in this process), scripted model without delay`,
  );
  console.log(
    'timing: per job = gap between the same point of consecutive jobs (raw: processing start; Ratchet: model-call ' +
      'and tool-handler start, performance.now() in this process); "→ completed" = until QueueEvents reports the ' +
      'last job completed; rates = work / wall time of the measured part; cpu µs/job = CPU time of this process ' +
      'and of the Redis server over the measured part, per job',
  );
  const single = {
    serial: await singleJobs(1, serialRuns * iterations),
    parallel: await singleJobs(concurrency, runs * iterations),
  };
  const chain = { serial: await chains(1, serialRuns), parallel: await chains(concurrency, runs) };
  // One at a time: each is a worker process starting and dying, which would crowd the two cores together.
  const takeoverResults: TakeoverResult[] = [];
  for (let index = 0; index < takeovers; index += 1)
    takeoverResults.push(await measureTakeover(url, index / takeovers));

  const contextRuns = [
    await measureContextTokens(url, longRun, 'effects off (effects: [])', []),
    await measureContextTokens(url, longRun, 'default effects', undefined),
  ];

  const scaling: ScalingResult[] = [];
  for (const delayMs of [50, 0]) {
    for (const workers of [1, 2, 4])
      scaling.push(await measureScaling({ url }, workers, delayMs, scalingRuns * workers));
  }

  const fairness = await measureFairnessRounds(fairnessOptions, 3);

  const singleRows = [single.serial, single.parallel].flatMap((rows) => [rows.raw, rows.ratchet]);
  const chainRows = [chain.serial, chain.parallel].flatMap((rows) => [
    rows.raw,
    rows.ratchet,
    rows.cycle,
    rows.runShare,
  ]);
  console.log('');
  console.log(formatRows('A. one job vs a 1-iteration run (no tools)', singleRows));
  console.log('');
  console.log(formatRows('B. chains: one noop tool call per iteration', chainRows));
  console.log('');
  console.log(formatTakeovers(takeoverResults));
  console.log('');
  console.log(formatContextTokens(contextRuns));
  console.log('');
  console.log(formatScaling(scaling));
  console.log('');
  console.log(formatFairness(fairness, fairnessOptions));
  console.log('');
  const withEffects = contextRuns[1];
  if (!withEffects) throw new Error('the context bench did not run');
  console.log(
    formatTargets(targetsOf(single, chain, takeoverResults, contextTarget(withEffects), scaling, fairness)),
  );
  const sink = await telemetrySink();
  if (sink) {
    const { requests, bytes } = await sink.counts();
    console.log(`\ntelemetry: ${requests} span exports received, ${(bytes / 1024).toFixed(0)} KB`);
    await sink.close();
  }
  console.log(`\nbench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
