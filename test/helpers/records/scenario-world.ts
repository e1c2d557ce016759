import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import '../../../src/models/index.js';
import { type LoadedConfig, loadConfig } from '../../../src/config/index.js';
import { type Engine, engineFromConfig } from '../../../src/engine/index.js';
import { silentLogger } from '../../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient, redisTargetOf } from '../../../src/redis/connection.js';
import { testWorkerSettings } from '../../../src/testing/test-engine.js';
import { spawnNodeProcess, type WorkerProcess } from '../../../src/testing/worker-process.js';
import { knownToolboxes } from '../../../src/tools/builtin/index.js';
import { altToolbox, testToolbox } from '../../fixtures/test-tools.js';

const repoRoot = resolve(import.meta.dirname, '../../..');

/** The key prefix of every fixture: Ratchet's default, as a deployment that never set one has it. */
export const fixturePrefix = 'ratchet';

/**
 * One Ratchet on a Redis of its own, for recording a fixture or finishing one: the scenario's config in a
 * temp dir, an engine in this process, and worker processes (real ones, which a crash point can kill).
 */
export class ScenarioWorld {
  readonly dir: string;
  readonly configPath: string;
  readonly loaded: LoadedConfig;
  readonly redis: RedisClient;
  readonly engine: Engine;
  private readonly workers: WorkerProcess[] = [];

  constructor(options: { config: Record<string, unknown>; redisUrl: string }) {
    this.dir = mkdtempSync(join(tmpdir(), 'ratchet-records-'));
    this.configPath = join(this.dir, 'ratchet.json');
    const config = {
      ...options.config,
      redis: { url: options.redisUrl, prefix: fixturePrefix },
      worker: testWorkerSettings,
      // Fixtures are replayed long after they were made: nothing is removed for its age.
      retention: { finished_runs_s: 0, idle_sessions_s: 0 },
    };
    writeFileSync(this.configPath, JSON.stringify(config, null, 2));
    this.loaded = loadConfig(this.configPath, {
      knownToolboxes: knownToolboxes([testToolbox(), altToolbox()]),
    });
    this.redis = createRedis({
      ...redisTargetOf(this.loaded.config.redis),
      logger: silentLogger(),
      name: 'records',
    });
    this.engine = engineFromConfig({ config: this.loaded.config, redis: this.redis, logger: silentLogger() });
  }

  /** A worker process with the test toolboxes, optionally armed to SIGKILL itself at a crash point. */
  spawnWorker(options: { crashAt?: string } = {}): WorkerProcess {
    const env: NodeJS.ProcessEnv = { ...process.env, RATCHET_LOG_LEVEL: 'warn' };
    delete env.RATCHET_CRASH_AT;
    if (options.crashAt) env.RATCHET_CRASH_AT = options.crashAt;
    const worker = spawnNodeProcess({
      args: ['--import', 'tsx', join(repoRoot, 'test/fixtures/test-worker.ts'), '--config', this.configPath],
      cwd: repoRoot,
      env,
    });
    this.workers.push(worker);
    return worker;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((worker) => worker.kill()));
    await this.engine.close();
    await closeRedis(this.redis);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls a condition (every 50 ms) until it holds; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}
