// How many Redis commands (round trips from the worker and client) a step of a tool loop costs, by command,
// on a Redis server of its own (nothing else talks to it). A count, not a time: it does not move with the
// machine's load, so one run compares two checkouts (`npx tsx bench/round-trips.ts` in each).
// Two measurements of BENCH_RUNS and 3 × BENCH_RUNS runs one at a time: their difference cancels the warm-up,
// start and clean-up, leaving the commands of 2 × BENCH_RUNS runs of 2N-1 jobs each.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { measureRatchetRuns } from './ratchet-runs.js';

const runs = Number(process.env.BENCH_RUNS ?? 20);
const iterations = 10;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

interface Counts {
  /** Commands clients sent, by name: the round trips (a pipeline's commands count one each). */
  sent: Map<string, number>;
  /** Commands Lua scripts ran inside Redis, by name: work, not round trips. */
  inScripts: Map<string, number>;
}

/** Counts every command Redis runs while `work` goes on, through MONITOR (which names a script's commands 'lua'). */
async function countedRuns(url: string, units: number): Promise<Counts> {
  const connection = new Redis(url);
  const monitor = await connection.monitor();
  const counts: Counts = { sent: new Map(), inScripts: new Map() };
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'monitor') return;
    const map = source === 'lua' ? counts.inScripts : counts.sent;
    map.set(name, (map.get(name) ?? 0) + 1);
  });
  try {
    await measureRatchetRuns({ url, iterations, parallel: 1, units, warmup: 1, concurrency: 1 });
  } finally {
    monitor.disconnect();
    connection.disconnect();
  }
  return counts;
}

function perJob(small: Map<string, number>, large: Map<string, number>, jobs: number) {
  return [...new Set([...small.keys(), ...large.keys()])]
    .map((name) => ({ name, perJob: ((large.get(name) ?? 0) - (small.get(name) ?? 0)) / jobs }))
    .filter((row) => Math.abs(row.perJob) >= 0.005)
    .sort((a, b) => b.perJob - a.perJob);
}

function print(title: string, rows: { name: string; perJob: number }[]): void {
  const total = rows.reduce((sum, row) => sum + row.perJob, 0);
  console.log(`${title}: ${total.toFixed(2)} per step job`);
  for (const row of rows) console.log(`  ${row.name.padEnd(24)} ${row.perJob.toFixed(2)}`);
}

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'ratchet-round-trips-'));
const server = spawn(
  'redis-server',
  ['--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir],
  {
    stdio: 'ignore',
  },
);
const url = `redis://127.0.0.1:${port}`;
/** Redis answers once it has started: connect without retries until it does. */
async function connectWhenUp(): Promise<Redis> {
  for (let tries = 0; ; tries++) {
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      client.disconnect();
      if (tries > 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const redis = await connectWhenUp();
try {
  const small = await countedRuns(url, runs);
  const large = await countedRuns(url, 3 * runs);
  const jobs = 2 * runs * (2 * iterations - 1);
  console.log(
    `${iterations}-iteration tool loop, one run at a time; the difference of ${3 * runs} and ${runs} runs (${jobs} jobs)`,
  );
  print('Round trips (commands clients sent)', perJob(small.sent, large.sent, jobs));
  print('Commands inside Lua scripts', perJob(small.inScripts, large.inScripts, jobs));
} finally {
  redis.disconnect();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}
