import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Cluster } from 'ioredis';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis, type RedisClient, type RedisTarget } from '../src/redis/connection.js';
import { shardOf, shardPrefix, stepQueueName } from '../src/redis/keys.js';
import { sweepExpired } from '../src/redis/retention.js';
import { stepJobId } from '../src/workflows/ids.js';
import { benchConfig } from './bench-config.js';
import { createBenchEngine } from './bench-engine.js';
import { readyLine } from './child-ready.js';
import { JobCompletions } from './job-completions.js';
import { scalingConcurrency, scalingConfigOptions, scalingIterations } from './scaling-config.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { runInSlots } from './slots.js';
import { percentile } from './stats.js';

const fixture = fileURLToPath(new URL('./fixtures/scaling-worker.ts', import.meta.url));

/**
 * E. Scaling: `workers` worker processes (each `scalingConcurrency` steps at once) on one Redis run `runs` runs
 * of `scalingIterations` iterations submitted by this process, enough in flight to keep every worker busy.
 * Per iteration: the gap between consecutive replies of a run (each reply's commit time, from the transcript;
 * the first from the run's creation). Redis CPU per step job, and Redis memory per finished run before and
 * after its retention window.
 */
export interface ScalingResult {
  workers: number;
  delayMs: number;
  runs: number;
  wallMs: number;
  runsPerSecond: number;
  iterationsPerSecond: number;
  p50IterationMs: number;
  p99IterationMs: number;
  redisCpuUsPerStep: number;
  /** Redis memory per finished run, right after the runs and after a retention sweep (bytes). */
  bytesPerRun: number;
  bytesPerRunAfterRetention: number;
  /** Measured on a Redis Cluster (its masters' CPU and memory summed). */
  cluster: boolean;
}

export async function measureScaling(
  target: RedisTarget,
  workers: number,
  delayMs: number,
  runs: number,
): Promise<ScalingResult> {
  const { url, clusterNodes } = target;
  const prefix = scratchPrefix();
  const logger = silentLogger();
  const loaded = benchConfig(scalingConfigOptions({ url, clusterNodes, prefix, delayMs }));
  const redis = createRedis({ ...target, logger, name: 'bench-scaling' });
  const engine = createBenchEngine(loaded, redis);
  const children: ChildProcess[] = [];
  let closeCompletions: () => Promise<void> | undefined = () => undefined;
  try {
    for (let index = 0; index < workers; index += 1) {
      const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
        env: {
          ...process.env,
          BENCH_REDIS_URL: url,
          BENCH_PREFIX: prefix,
          BENCH_DELAY_MS: String(delayMs),
          ...(clusterNodes ? { BENCH_CLUSTER_NODES: clusterNodes.join(',') } : {}),
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
    }
    await Promise.all(children.map((child) => readyLine(child, 60_000, 'a scaling worker')));
    const parallel = workers * scalingConcurrency;
    const started: { runId: string; sessionId: string }[] = [];
    // The end of a run is seen from BullMQ's completion events of its last iteration job (each shard's queue
    // has its own), not by polling each run: polling 20 runs every 50 ms would take CPU from the workers.
    const completions = await Promise.all(
      Array.from({ length: engine.space.shards }, (_, shard) =>
        JobCompletions.open({
          url,
          prefix: shardPrefix(engine.space, shard),
          queueName: stepQueueName,
          ...(clusterNodes ? { connection: redis } : {}),
        }),
      ),
    );
    closeCompletions = async () => {
      await Promise.all(completions.map((completion) => completion.close()));
    };
    const runOne = async (measured: boolean) => {
      const run = await engine.startRun({ input: 'count' });
      const shard = shardOf(engine.space, run.sessionId);
      await completions[shard]?.wait(stepJobId.iteration(run.runId, scalingIterations), 120_000);
      const done = await engine.waitForRun(run.runId, { timeoutMs: 120_000, pollMs: 250 });
      if (done.status !== 'completed') throw new Error(`scaling run ${done.status}: ${done.error?.message}`);
      if (measured) started.push(run);
    };
    // Warm-up: every worker process has taken steps before the clock starts.
    await runInSlots(parallel, parallel, () => runOne(false));
    const before = await serverStats(redis);
    const begin = performance.now();
    await runInSlots(runs, parallel, () => runOne(true));
    const wallMs = performance.now() - begin;
    const after = await serverStats(redis);
    const gaps = (await Promise.all(started.map((run) => iterationGaps(engine, run))))
      .flat()
      .sort((a, b) => a - b);
    // The retention window passes (1 s here) and a sweep removes the runs and their sessions.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await sweepExpired(
      redis,
      engine.space,
      { finished_runs_s: 1, idle_sessions_s: 1, sweep_interval_s: 1, batch_size: 200 },
      logger,
      1_000_000,
    );
    const retained = await serverStats(redis);
    const steps = runs * (2 * scalingIterations - 1);
    return {
      workers,
      delayMs,
      runs,
      wallMs,
      runsPerSecond: (runs / wallMs) * 1000,
      iterationsPerSecond: ((runs * scalingIterations) / wallMs) * 1000,
      p50IterationMs: percentile(gaps, 0.5),
      p99IterationMs: percentile(gaps, 0.99),
      redisCpuUsPerStep: ((after.cpuMs - before.cpuMs) * 1000) / steps,
      bytesPerRun: (after.memory - before.memory) / runs,
      bytesPerRunAfterRetention: (retained.memory - before.memory) / runs,
      cluster: clusterNodes !== undefined,
    };
  } finally {
    for (const child of children) child.stdin?.end();
    await Promise.all(children.map((child) => exited(child, 10_000)));
    await closeCompletions();
    await engine.close();
    await closeRedis(redis);
    // A cluster is the caller's, torn down whole; one Redis is shared and gets its keys back.
    if (!clusterNodes) await deleteScratchKeys(url, prefix);
  }
}

/** Redis CPU time (ms) and used memory (bytes), summed over every master of a cluster. */
async function serverStats(redis: RedisClient): Promise<{ cpuMs: number; memory: number }> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let cpuMs = 0;
  let memory = 0;
  for (const server of servers) {
    const info = await server.info();
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
    cpuMs += (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
    memory += field('used_memory');
  }
  return { cpuMs, memory };
}

async function iterationGaps(
  engine: ReturnType<typeof createBenchEngine>,
  run: { runId: string; sessionId: string },
): Promise<number[]> {
  const record = await engine.getRun(run.runId);
  const chat = await engine.readChat(run.sessionId);
  if (!record) return [];
  const times = [
    Date.parse(record.created_at),
    ...chat
      .filter((message) => message.role === 'assistant')
      .map((message) => Date.parse(message.created_at)),
  ];
  return times.slice(1).map((time, index) => time - (times[index] as number));
}

/** Waits for a child to exit; SIGKILLs it (by its pid) if it has not within the time. */
function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function formatScaling(results: readonly ScalingResult[]): string {
  const header =
    'Redis            model delay  workers    runs/s  iterations/s  p50/iteration  p99/iteration  vs 1 worker  Redis CPU µs/step  KB/run  KB/run after retention';
  const lines = results.map((result) => {
    const one = results.find(
      (other) => other.delayMs === result.delayMs && other.workers === 1 && other.cluster === result.cluster,
    );
    const ratio = one ? result.runsPerSecond / one.runsPerSecond : Number.NaN;
    return [
      (result.cluster ? '3-master cluster' : 'one Redis').padEnd(16),
      `${result.delayMs} ms`.padStart(11),
      String(result.workers).padStart(8),
      result.runsPerSecond.toFixed(1).padStart(9),
      result.iterationsPerSecond.toFixed(0).padStart(13),
      `${result.p50IterationMs.toFixed(0)} ms`.padStart(14),
      `${result.p99IterationMs.toFixed(0)} ms`.padStart(14),
      `${ratio.toFixed(2)}×`.padStart(12),
      result.redisCpuUsPerStep.toFixed(0).padStart(18),
      // A cluster's masters each keep AOF and cluster-bus buffers whose size moves more than a run's data.
      (result.cluster ? 'n/a' : (result.bytesPerRun / 1024).toFixed(1)).padStart(7),
      (result.cluster ? 'n/a' : (result.bytesPerRunAfterRetention / 1024).toFixed(1)).padStart(23),
    ].join(' ');
  });
  return [
    `E. scaling: worker processes on one Redis, ${scalingIterations}-iteration runs (a calculate call each), ${scalingConcurrency} steps at once per worker`,
    header,
    ...lines,
  ].join('\n');
}

export function scalingTarget(results: readonly ScalingResult[]): {
  label: string;
  measured: string;
  limit: string;
  pass: boolean;
} {
  const slow = results.filter((result) => result.delayMs > 0 && !result.cluster);
  const one = slow.find((result) => result.workers === 1);
  const four = slow.find((result) => result.workers === 4);
  const ratio = one && four ? four.runsPerSecond / one.runsPerSecond : Number.NaN;
  return {
    label: `runs/s, 4 worker processes vs 1, ${four?.delayMs ?? 50} ms model`,
    measured: `${ratio.toFixed(2)}×`,
    limit: '≥ 3.5×',
    pass: ratio >= 3.5,
  };
}
