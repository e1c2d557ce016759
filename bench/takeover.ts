import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';
import { pino } from 'pino';
import type { Engine } from '../src/engine/index.js';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis, type RedisClient } from '../src/redis/connection.js';
import { shardPrefix, stepQueueName } from '../src/redis/keys.js';
import { clientNames } from '../src/redis/worker-registry.js';
import { RatchetWorker } from '../src/worker/index.js';
import { stepJobId } from '../src/workflows/ids.js';
import { benchConfig } from './bench-config.js';
import { createBenchEngine } from './bench-engine.js';
import { readyLine } from './child-ready.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';
import { takeoverConfigOptions } from './takeover-config.js';

/** How long after the survivor started the kill comes at the earliest. */
const survivorSettleMs = 250;
/** How far the kills are spread over the watch's poll period (see measureTakeover). */
const pollPhaseSpreadMs = 100;

const fixture = fileURLToPath(new URL('./fixtures/takeover-worker.ts', import.meta.url));

/**
 * Where a takeover's time goes (issue 37), each in ms after the SIGKILL (NaN: not seen). `connectionGoneMs` is
 * this process's own CLIENT LIST poll (every 5 ms after the kill) first missing the child's named connection;
 * `noticedMs` and `releasedMs` are the survivor's log lines (the watch judged it dead; its locks released and
 * BullMQ's stalled check run); `stalledMs`, `activeMs` and `completedMs` are BullMQ's events for the job
 * (delivered through the event stream, so a few ms late).
 */
export interface TakeoverParts {
  connectionGoneMs: number;
  /**
   * When the last of those polls that still listed it was sent: a wide gap to `connectionGoneMs` (the polls
   * are 5 ms apart) means this process's event loop was held up, not Redis or the kernel.
   */
  lastListedMs: number;
  noticedMs: number;
  releasedMs: number;
  activeMs: number;
  completedMs: number;
}

export interface TakeoverResult {
  parts: TakeoverParts;
  /** SIGKILL of the worker holding the run's first iteration → the run seen completed (polled every 20 ms). */
  takeoverMs: number;
  /** SIGKILL → BullMQ's `stalled` event for the job (the survivor's stalled check moved it back to wait). */
  stalledMs: number;
  /** The iteration job became active in the child → SIGKILL. */
  activeToKillMs: number;
  status: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  deadWorkerMs: number;
}

/**
 * A child worker process takes a run whose model call lasts a minute and is SIGKILLed `killDelayFraction` of
 * half the lock duration (one lock renewal period) after the iteration job became active; a second worker, in
 * this process, was started at least `survivorSettleMs` before the kill (so its start-up is not counted) and must take the stalled job
 * over. Spreading the delay over the renewal period samples where in its lock's life a worker dies.
 */
export async function measureTakeover(url: string, killDelayFraction: number): Promise<TakeoverResult> {
  const prefix = scratchPrefix();
  const logger = silentLogger();
  const seen = new Map<string, number>();
  // The survivor's warn lines, timed as they are written (pino writes to the stream at once).
  const survivorLogger = pino(
    { level: 'warn' },
    {
      write(line: string) {
        const message = (JSON.parse(line) as { msg?: string }).msg ?? '';
        if (!seen.has(message)) seen.set(message, performance.now());
      },
    },
  );
  const loaded = benchConfig(takeoverConfigOptions({ url, prefix, replyDelayMs: 0 }));
  const { config } = loaded;
  const redis = createRedis({ url, logger, name: 'bench-takeover' });
  const engine = createBenchEngine(loaded, redis);
  const survivor = new RatchetWorker({ loaded, toolboxes: [], logger: survivorLogger });
  const events = new QueueEvents(stepQueueName, {
    connection: { url, maxRetriesPerRequest: null },
    prefix: shardPrefix(engine.space, 0),
    lastEventId: '0-0',
  });
  events.on('error', () => {});
  let stalledAt = Number.NaN;
  let activeAt2 = Number.NaN;
  let completedAt = Number.NaN;
  let killed = false;
  events.on('stalled', () => {
    stalledAt = performance.now();
  });
  events.on('active', () => {
    if (killed && Number.isNaN(activeAt2)) activeAt2 = performance.now();
  });
  events.on('completed', () => {
    if (killed && Number.isNaN(completedAt)) completedAt = performance.now();
  });
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, BENCH_REDIS_URL: url, BENCH_PREFIX: prefix },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    await events.waitUntilReady();
    await readyLine(child, 30_000, 'the takeover worker');
    const { runId } = await engine.startRun({ input: 'go' });
    const activeAt = await waitUntilActive(engine, stepJobId.iteration(runId, 1), 10_000);
    await survivor.start();
    const survivorStartedAt = performance.now();
    // Not before the survivor has settled: its start-up work (first fetch, compiling code on first use) runs
    // on this process's event loop for a while after start() resolves and would be counted as takeover time.
    // The fraction also spreads the kill over 100 ms, so it falls at every phase of the survivor's watch
    // (it polls every 50 ms, 100 ms before decision 0045's amendment): the steps of half the lock duration
    // are whole multiples of the poll, and would otherwise put every kill at about the same phase.
    const killDelayMs = Math.max(
      (killDelayFraction * config.worker.lock_duration_ms) / 2 +
        killDelayFraction * pollPhaseSpreadMs -
        (performance.now() - activeAt),
      survivorSettleMs - (performance.now() - survivorStartedAt),
    );
    if (killDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, killDelayMs));
    const connectionName = await childConnectionName(redis, engine, child.pid as number);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const killedAt = performance.now();
    killed = true;
    child.kill('SIGKILL');
    const goneAt = waitUntilUnlisted(redis, connectionName, 10_000);
    await exited;
    const run = await engine.waitForRun(runId, { timeoutMs: 90_000, pollMs: 20 });
    const since = (at: number | undefined) => (at === undefined ? Number.NaN : at - killedAt);
    return {
      parts: {
        connectionGoneMs: since((await goneAt).goneAt),
        lastListedMs: since((await goneAt).lastListedAt),
        noticedMs: since(seen.get(noticedByConnection)),
        releasedMs: since(seen.get(stepsReleased)),
        activeMs: since(activeAt2),
        completedMs: since(completedAt),
      },
      takeoverMs: performance.now() - killedAt,
      stalledMs: stalledAt - killedAt,
      activeToKillMs: killedAt - activeAt,
      status: run.status,
      lockDurationMs: config.worker.lock_duration_ms,
      stalledIntervalMs: config.worker.stalled_interval_ms,
      deadWorkerMs: config.worker.dead_worker_ms,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await survivor.close();
    await events.close();
    await engine.close();
    await closeRedis(redis);
    await deleteScratchKeys(url, prefix);
  }
}

const noticedByConnection = 'a worker process has no connection to Redis left: taken for dead';
const stepsReleased = 'a worker process died: its steps were released and go back to the queue';

/** The connection name the child process `pid` registered (decision 0045). */
async function childConnectionName(redis: RedisClient, engine: Engine, pid: number): Promise<string> {
  const entries = Object.values(await redis.hgetall(`${engine.space.prefix}:{workers}:registry`)).map(
    (json) => JSON.parse(json) as { pid: number; connection_name?: string },
  );
  const name = entries.find((entry) => entry.pid === pid)?.connection_name;
  if (!name) throw new Error(`no registry entry names the connection of pid ${pid}`);
  return name;
}

/**
 * The `performance.now()` at which CLIENT LIST (polled every 5 ms) first no longer lists `name`, and at which
 * the last poll that still listed it was sent.
 */
async function waitUntilUnlisted(
  redis: RedisClient,
  name: string,
  timeoutMs: number,
): Promise<{ goneAt: number; lastListedAt: number }> {
  const deadline = Date.now() + timeoutMs;
  let lastListedAt = Number.NaN;
  while (Date.now() < deadline) {
    const sentAt = performance.now();
    const listing = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'normal'));
    if (!clientNames(listing).has(name)) return { goneAt: performance.now(), lastListedAt };
    lastListedAt = sentAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { goneAt: Number.NaN, lastListedAt };
}

/** Resolves with the `performance.now()` at which the job was first seen active. */
async function waitUntilActive(engine: Engine, jobId: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const queue = engine.queues.queue(0);
  while (Date.now() < deadline) {
    if ((await queue.getJobState(jobId)) === 'active') return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job ${jobId} did not become active within ${timeoutMs} ms`);
}
