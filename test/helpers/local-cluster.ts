import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './find-redis.js';

/**
 * A local Redis Cluster for tests: `masters` redis-server processes with cluster mode and AOF (fsync on every
 * write) on free loopback ports, joined by `redis-cli --cluster create`, no replicas. Every process is
 * stopped by its pid in stop(); a master can be stopped and started again on its AOF.
 */
export interface LocalCluster {
  nodes: string[];
  ports: number[];
  /** Shuts a master down (SIGTERM: it writes its AOF and exits) and starts it again on the same port and data. */
  restartNode(index: number, downMs?: number): Promise<void>;
  /** Sends a master a signal by its pid (SIGSTOP freezes it: it neither answers nor refuses; SIGCONT wakes it). */
  signalNode(index: number, signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-cluster-'));
  const ports: number[] = [];
  for (let index = 0; index < masters; index += 1) ports.push(await freePort());
  const processes: (ChildProcess | undefined)[] = [];
  const start = async (index: number) => {
    const port = ports[index] as number;
    const data = join(dir, String(port));
    mkdirSync(data, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '3000',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--dir',
        data,
      ],
      { stdio: 'ignore' },
    );
    processes[index] = child;
    await until(async () => (await ping(port)) === 'PONG', 10_000, `redis-server on ${port}`);
  };
  try {
    for (let index = 0; index < masters; index += 1) await start(index);
    const created = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0)
      throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
    for (const port of ports) {
      await until(async () => (await clusterState(port)) === 'ok', 20_000, `the cluster state on ${port}`);
    }
  } catch (error) {
    await stopAll(processes);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    nodes: ports.map((port) => `redis://127.0.0.1:${port}`),
    ports,
    async restartNode(index, downMs = 500) {
      const child = processes[index];
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start(index);
      await until(
        async () => (await clusterState(ports[index] as number)) === 'ok',
        20_000,
        'the cluster state',
      );
    },
    signalNode(index, signal) {
      processes[index]?.kill(signal);
    },
    async stop() {
      await stopAll(processes);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function stopAll(processes: readonly (ChildProcess | undefined)[]): Promise<void> {
  await Promise.all(
    processes.map(async (child) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

async function withClient<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T | undefined> {
  const redis = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await use(redis);
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

function ping(port: number): Promise<string | undefined> {
  return withClient(port, (redis) => redis.ping());
}

async function clusterState(port: number): Promise<string | undefined> {
  const info = await withClient(port, (redis) => redis.call('CLUSTER', 'INFO') as Promise<string>);
  return info ? /cluster_state:(\w+)/.exec(info)?.[1] : undefined;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
