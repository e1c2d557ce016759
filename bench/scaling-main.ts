/**
 * `npm run bench:scaling`: section E of `npm run bench` alone (bench/scaling.ts). BENCH_SCALING_RUNS runs per
 * worker process (default 50); BENCH_SCALING_WORKERS (default "1,2,4"); BENCH_SCALING_DELAYS (default "50,0").
 * BENCH_SCALING_CLUSTER=1 also runs the 50 ms measurements on a local Redis Cluster of three masters that it
 * starts (redis-server and redis-cli must be installed) and stops: correctness and overhead beside one Redis
 * (on one machine its masters share the cores, so it shows no speed-up).
 */
import { DEFAULT_REDIS_URL } from '../src/config/index.js';
import { startLocalCluster } from '../test/helpers/local-cluster.js';
import { describeEnvironment } from './environment.js';
import { formatScaling, measureScaling, type ScalingResult, scalingTarget } from './scaling.js';

const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
const runs = Number(process.env.BENCH_SCALING_RUNS ?? 50);
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map(Number);

console.log(`Ratchet scaling bench · ${await describeEnvironment(url)}`);
const results: ScalingResult[] = [];
for (const delayMs of list('BENCH_SCALING_DELAYS', '50,0')) {
  for (const workers of list('BENCH_SCALING_WORKERS', '1,2,4')) {
    results.push(await measureScaling({ url }, workers, delayMs, runs * workers));
  }
}
if (process.env.BENCH_SCALING_CLUSTER === '1') {
  const cluster = await startLocalCluster(3);
  try {
    for (const workers of list('BENCH_SCALING_WORKERS', '1,2,4')) {
      results.push(await measureScaling({ url, clusterNodes: cluster.nodes }, workers, 50, runs * workers));
    }
  } finally {
    await cluster.stop();
  }
}
console.log(formatScaling(results));
const target = scalingTarget(results);
console.log(`${target.label}: ${target.measured} (${target.limit}) ${target.pass ? 'PASS' : 'FAIL'}`);
