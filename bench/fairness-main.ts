/**
 * `npm run bench:fairness`: section F of `npm run bench` alone (bench/fairness.ts): tenant A submits
 * BENCH_FAIRNESS_RUNS one-iteration runs (default 2,000), then tenant B 20, with fair admission off (once) and
 * on, and B alone on an idle deployment, in BENCH_FAIRNESS_ROUNDS interleaved rounds (default 3).
 * BENCH_FAIRNESS_RECHECK_S and BENCH_FAIRNESS_B_DELAY_MS put B behind A's queued runs' rechecks (see
 * FairnessOptions).
 */
import { loadavg } from 'node:os';
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { positiveInteger } from './env-size.js';
import { describeEnvironment } from './environment.js';
import { fairnessTargets, formatFairness, measureFairnessRounds } from './fairness.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const options = {
  url,
  heavyRuns: positiveInteger('BENCH_FAIRNESS_RUNS', 2000),
  lightRuns: 20,
  concurrency: positiveInteger('BENCH_FAIRNESS_CONCURRENCY', 20),
  modelDelayMs: 20,
  ...(process.env.BENCH_FAIRNESS_RECHECK_S ? { recheckS: Number(process.env.BENCH_FAIRNESS_RECHECK_S) } : {}),
  ...(process.env.BENCH_FAIRNESS_B_DELAY_MS
    ? { lightDelayMs: Number(process.env.BENCH_FAIRNESS_B_DELAY_MS) }
    : {}),
};

const rounds = positiveInteger('BENCH_FAIRNESS_ROUNDS', 3);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

console.log(`Ratchet fairness bench · ${await describeEnvironment(url)} · load average ${load()}`);
const results = await measureFairnessRounds(options, rounds);
console.log(formatFairness(results, options));
console.log(`load average at the end: ${load()}`);
for (const target of fairnessTargets(results))
  console.log(`${target.label}: ${target.measured} (${target.limit}) ${target.pass ? 'PASS' : 'FAIL'}`);
