/**
 * `npm run bench:fairness`: section F of `npm run bench` alone (bench/fairness.ts): tenant A submits
 * BENCH_FAIRNESS_RUNS one-iteration runs (default 2,000), then tenant B 20, on an idle deployment, with fair
 * admission off and on.
 */
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { describeEnvironment } from './environment.js';
import { type FairnessResult, fairnessTargets, formatFairness, measureFairness } from './fairness.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const options = {
  url,
  heavyRuns: Number(process.env.BENCH_FAIRNESS_RUNS ?? 2000),
  lightRuns: 20,
  concurrency: 20,
  modelDelayMs: 20,
};

console.log(`Ratchet fairness bench · ${await describeEnvironment(url)}`);
const results: FairnessResult[] = [];
for (const mode of ['idle', 'off', 'on'] as const) results.push(await measureFairness(options, mode));
console.log(formatFairness(results, options));
for (const target of fairnessTargets(results))
  console.log(`${target.label}: ${target.measured} (${target.limit}) ${target.pass ? 'PASS' : 'FAIL'}`);
