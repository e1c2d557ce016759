// How many Redis commands (round trips from the worker and client) a step of a tool loop costs, by command,
// on a Redis server of its own (nothing else talks to it). A count, not a time: it does not move with the
// machine's load. `npm run bench:round-trips` prints it; test/integration/round-trips.int.test.ts holds it
// under a ceiling. Two measurements of `runs` and 3 × `runs` runs one at a time: their difference cancels the
// warm-up, start and clean-up, leaving the commands of 2 × `runs` runs of 2N-1 jobs each.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { measureRatchetRuns } from './ratchet-runs.js';

export interface CommandRow {
  name: string;
  perJob: number;
}

export interface RoundTripCount {
  iterations: number;
  /** Step jobs the figures are per (the difference of the two measurements). */
  jobs: number;
  /** Commands clients sent (a pipeline's commands count one each), by name, most first. */
  sent: CommandRow[];
  /** Commands Lua scripts ran inside Redis, by name, most first: work, not round trips. */
  inScripts: CommandRow[];
  roundTrips: number;
  scriptCommands: number;
  /**
   * The same by step kind, per job of that kind: a command counts for the step whose job id was named last
   * (so fetching the next job counts for the step that completes); the client's start of a run apart.
   */
  byKind: { kind: StepKind; jobs: number; roundTrips: number; scriptCommands: number }[];
}

type StepKind = 'iteration' | 'tool call' | 'run start (client)';

interface Counts {
  sent: Map<string, number>;
  inScripts: Map<string, number>;
  /** `${kind}|sent` and `${kind}|lua` → commands. */
  byKind: Map<string, number>;
}

/** The step kind a command's arguments name a job of (stepJobId in src/workflows/ids.ts), if any. */
function kindNamed(args: readonly string[]): StepKind | undefined {
  for (const arg of args) {
    if (/-i\d+-t\d+$/.test(arg)) return 'tool call';
    if (/-i\d+$/.test(arg)) return 'iteration';
  }
  return undefined;
}

/** The bench's engine connection (bench/ratchet-runs.ts): the client that starts each run. */
const clientConnection = 'bench-engine';

/** BullMQ's QueueEvents names its connection `<prefix>:<queue>:qe`: the bench's own completion watcher. */
const measuringConnection = /:qe$/;

/**
 * Counts every command Redis runs while the runs go on, through MONITOR (which names a script's commands
 * 'lua'), leaving out what the bench's completion watcher sends: it reads BullMQ's event stream (XREAD) to see
 * each run end, which no Ratchet client needs (it was 2.05 of the 7.04 round trips issue 37 counted).
 */
async function countedRuns(
  url: string,
  options: { units: number; iterations: number; worker?: Record<string, unknown> },
): Promise<Counts> {
  const connection = new Redis(url);
  const monitor = await connection.monitor();
  const counts: Counts = { sent: new Map(), inScripts: new Map(), byKind: new Map() };
  let step: StepKind | undefined;
  /** Each connection's name, by its address, from the CLIENT SETNAME it sent. */
  const names = new Map<string, string>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'monitor') return;
    if (name === 'client' && String(args[1]).toLowerCase() === 'setname') names.set(source, String(args[2]));
    const connectionName = names.get(source) ?? '';
    if (measuringConnection.test(connectionName)) return;
    const map = source === 'lua' ? counts.inScripts : counts.sent;
    map.set(name, (map.get(name) ?? 0) + 1);
    if (connectionName !== clientConnection) step = kindNamed(args) ?? step;
    const kind = connectionName === clientConnection ? 'run start (client)' : step;
    const key = `${kind}|${source === 'lua' ? 'lua' : 'sent'}`;
    if (kind) counts.byKind.set(key, (counts.byKind.get(key) ?? 0) + 1);
  });
  try {
    await measureRatchetRuns({
      url,
      iterations: options.iterations,
      parallel: 1,
      units: options.units,
      warmup: 1,
      concurrency: 1,
      ...(options.worker ? { worker: options.worker } : {}),
    });
  } finally {
    monitor.disconnect();
    connection.disconnect();
  }
  return counts;
}

function perJob(small: Map<string, number>, large: Map<string, number>, jobs: number): CommandRow[] {
  return [...new Set([...small.keys(), ...large.keys()])]
    .map((name) => ({ name, perJob: ((large.get(name) ?? 0) - (small.get(name) ?? 0)) / jobs }))
    .filter((row) => Math.abs(row.perJob) >= 0.005)
    .sort((a, b) => b.perJob - a.perJob);
}

function total(rows: readonly CommandRow[]): number {
  return rows.reduce((sum, row) => sum + row.perJob, 0);
}

/** Redis answers once it has started: connect without retries until it does. */
async function connectWhenUp(url: string): Promise<Redis> {
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

/**
 * Starts a redis-server of its own, counts `runs` and 3 × `runs` tool-loop runs of `iterations` iterations,
 * one at a time, and stops it. `worker`: more keys of the worker section (background timers such as the dead
 * worker watch count time, not steps: turn them off for a count that does not depend on the machine's speed).
 */
export async function countRoundTrips(options: {
  runs: number;
  iterations?: number;
  worker?: Record<string, unknown>;
}): Promise<RoundTripCount> {
  const iterations = options.iterations ?? 10;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-round-trips-'));
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const url = `redis://127.0.0.1:${port}`;
  try {
    const redis = await connectWhenUp(url);
    redis.disconnect();
    const measure = (units: number) =>
      countedRuns(url, { units, iterations, ...(options.worker ? { worker: options.worker } : {}) });
    const small = await measure(options.runs);
    const large = await measure(3 * options.runs);
    const jobs = 2 * options.runs * (2 * iterations - 1);
    const sent = perJob(small.sent, large.sent, jobs);
    const inScripts = perJob(small.inScripts, large.inScripts, jobs);
    const runs = 2 * options.runs;
    const kinds = [
      { kind: 'iteration', jobs: runs * iterations },
      { kind: 'tool call', jobs: runs * (iterations - 1) },
      { kind: 'run start (client)', jobs: runs },
    ] as const;
    const byKind = kinds.map(({ kind, jobs: kindJobs }) => {
      const of = (where: string) =>
        ((large.byKind.get(`${kind}|${where}`) ?? 0) - (small.byKind.get(`${kind}|${where}`) ?? 0)) /
        kindJobs;
      return { kind, jobs: kindJobs, roundTrips: of('sent'), scriptCommands: of('lua') };
    });
    return {
      iterations,
      jobs,
      sent,
      inScripts,
      roundTrips: total(sent),
      scriptCommands: total(inScripts),
      byKind,
    };
  } finally {
    server.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
