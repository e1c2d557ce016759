import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { redactUrl } from '../config/index.js';

/** A Redis the CLI uses: one that already answered, or a redis-server it started (stopped by `stop`). */
export interface LocalRedis {
  url: string;
  /** The redis-server started here, if any. */
  started: { pid: number; dataDir: string } | undefined;
  stop(): Promise<void>;
}

export interface EnsureRedisOptions {
  url: string;
  /** Where a started redis-server keeps its data (AOF) and log. */
  dataDir: string;
  /** PATH to look for redis-server in; defaults to process.env.PATH. */
  path?: string | undefined;
  say?: (line: string) => void;
}

/**
 * Redis is not there and cannot be started here: the message says why and how to start one (the CLI prints
 * it as it is, without a stack trace).
 */
export class LocalRedisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalRedisError';
  }
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** How to start a redis-server for a URL: its port and password; or why the CLI will not start one. */
export function localServerPlan(
  url: string,
): { port: number; password: string | undefined } | { refused: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: 'the URL does not parse' };
  }
  if (parsed.protocol !== 'redis:') return { refused: 'it is a TLS (rediss://) URL' };
  if (!loopbackHosts.has(parsed.hostname)) return { refused: `${parsed.hostname} is not this machine` };
  if (parsed.username !== '' && parsed.username !== 'default') {
    return { refused: `it names the ACL user "${parsed.username}"` };
  }
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  return { port, password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password) };
}

/** redis-server's arguments: loopback only, data and log in `dataDir`, AOF every second, no eviction. */
export function redisServerArgs(
  plan: { port: number; password: string | undefined },
  dataDir: string,
): string[] {
  const directory = resolve(dataDir);
  return [
    '--port',
    String(plan.port),
    '--bind',
    '127.0.0.1',
    '-::1',
    '--dir',
    directory,
    '--logfile',
    join(directory, 'redis.log'),
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
    ...(plan.password === undefined ? [] : ['--requirepass', plan.password]),
  ];
}

/** The first executable called `name` in the PATH list, if any. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export function howToStartRedis(url: string, reason: string): string {
  return [
    `Redis does not answer at ${redactUrl(url)}, and ${reason}.`,
    'Start one, then run this again:',
    '  redis-server                      (install it with: apt-get install redis-server, or brew install redis)',
    '  docker compose up -d redis        (from the Ratchet repository)',
    'or point REDIS_URL at a Redis that runs.',
  ].join('\n');
}

export type RedisProbe = { status: 'ok' } | { status: 'absent' } | { status: 'refusing'; message: string };

/** PING within a second: answered; nothing listening; or something listening that refuses (auth, loading). */
export async function probeRedis(url: string): Promise<RedisProbe> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    enableOfflineQueue: false,
    // Connected means something listens; PING then says whether it takes commands.
    enableReadyCheck: false,
  });
  redis.on('error', () => {
    // The probe's result says it.
  });
  try {
    await redis.connect();
  } catch {
    redis.disconnect();
    return { status: 'absent' };
  }
  try {
    await redis.ping();
    return { status: 'ok' };
  } catch (error) {
    return { status: 'refusing', message: (error as Error).message };
  } finally {
    redis.disconnect();
  }
}

/**
 * Uses the Redis at `url` when it answers. Otherwise, when the URL points at this machine and redis-server
 * is on the PATH, starts one for it (data under `dataDir`) and stops it in `stop`. Else a LocalRedisError saying
 * how to start Redis.
 */
export async function ensureRedis(options: EnsureRedisOptions): Promise<LocalRedis> {
  const { url } = options;
  const probe = await probeRedis(url);
  if (probe.status === 'ok') return { url, started: undefined, stop: async () => {} };
  if (probe.status === 'refusing') {
    throw new LocalRedisError(`Redis at ${redactUrl(url)} answers but refuses commands: ${probe.message}`);
  }
  const plan = localServerPlan(url);
  if ('refused' in plan)
    throw new LocalRedisError(
      howToStartRedis(url, `the CLI starts one only for this machine (${plan.refused})`),
    );
  const binary = findExecutable('redis-server', options.path ?? process.env.PATH);
  if (!binary) throw new LocalRedisError(howToStartRedis(url, 'redis-server is not on the PATH'));
  mkdirSync(options.dataDir, { recursive: true });
  // Its own process group: a Ctrl-C at the terminal must not stop Redis under a run that is asking whether
  // to cancel. The exit hook stops it when this process ends without calling stop().
  const child = spawn(binary, redisServerArgs(plan, options.dataDir), { stdio: 'ignore', detached: true });
  const stopOnExit = () => child.kill('SIGTERM');
  process.once('exit', stopOnExit);
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.once('error', () => {
    // Reported below: it never answers.
  });
  const deadline = Date.now() + 10_000;
  while ((await probeRedis(url)).status !== 'ok') {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      process.removeListener('exit', stopOnExit);
      throw new LocalRedisError(
        `redis-server (port ${plan.port}) did not start${logTail(options.dataDir)}\n` +
          howToStartRedis(url, 'starting redis-server failed'),
      );
    }
    await new Promise((wait) => setTimeout(wait, 50));
  }
  options.say?.(`started redis-server on port ${plan.port} (data in ${resolve(options.dataDir)})`);
  return {
    url,
    started: { pid: child.pid ?? 0, dataDir: resolve(options.dataDir) },
    stop: () => stopServer(child, exited, stopOnExit),
  };
}

async function stopServer(child: ChildProcess, exited: Promise<void>, stopOnExit: () => void): Promise<void> {
  process.removeListener('exit', stopOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

function logTail(dataDir: string): string {
  const log = join(dataDir, 'redis.log');
  if (!existsSync(log)) return '';
  const lines = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-5);
  return `; the end of ${log}:\n${lines.map((line) => `  ${line}`).join('\n')}`;
}
