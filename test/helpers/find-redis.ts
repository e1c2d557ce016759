import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeRedis } from '../../src/redis/local-redis.js';

/** Answers PING within a second? (The same probe `ratchet dev` uses.) */
export async function redisAnswers(url: string): Promise<boolean> {
  return (await probeRedis(url)).status === 'ok';
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface OwnRedis {
  url: string;
  port: number;
  dir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a private redis-server on a free port in a temp dir; stopped by pid. */
export async function startRedisServer(
  options: { appendOnly?: boolean; port?: number; dir?: string } = {},
): Promise<OwnRedis> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ratchet-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
  ];
  args.push('--appendonly', options.appendOnly ? 'yes' : 'no');
  if (options.appendOnly) args.push('--appendfsync', 'always');
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    port,
    dir,
    process: child,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** REDIS_URL, else 127.0.0.1:6379, else a redis-server started here (stopped by the returned function). */
export async function findRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const candidates = [process.env.REDIS_URL, 'redis://127.0.0.1:6379'].filter((url): url is string =>
    Boolean(url),
  );
  for (const url of candidates) {
    if (await redisAnswers(url)) return { url, stop: async () => {} };
  }
  try {
    const own = await startRedisServer();
    return { url: own.url, stop: () => own.stop() };
  } catch (error) {
    throw new Error(
      `no Redis for the tests: nothing answers at ${candidates.join(' or ')}, and redis-server could not be started ` +
        `(${(error as Error).message}). Install redis-server (apt-get install redis-server) or set REDIS_URL.`,
    );
  }
}
