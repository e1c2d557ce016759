import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type LoadedConfig, loadConfig } from '../../src/config/index.js';
import { type Engine, engineFromConfig } from '../../src/engine/index.js';
import type { Extensions } from '../../src/extensions/extensions.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, type RedisClient, redisTargetOf } from '../../src/redis/connection.js';
import { deleteKeys } from '../../src/testing/test-engine.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import type { ToolBox } from '../../src/tools/index.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { testToolbox } from '../fixtures/test-tools.js';

/**
 * A config with extensions, as a program using Ratchet as a library runs it: `loadConfig(path, {extensions})`
 * and a worker given the same extensions, on the test's Redis under a key prefix of its own. Providers'
 * `record_calls: calls.jsonl` is read by modelCalls().
 */
export class ExtensionWorld {
  readonly dir = mkdtempSync(join(tmpdir(), 'ratchet-extensions-'));
  readonly prefix = `t-${randomBytes(6).toString('hex')}`;
  readonly loaded: LoadedConfig;
  readonly redis: RedisClient;
  readonly engine: Engine;
  private worker: RatchetWorker | undefined;
  private readonly toolboxes: readonly ToolBox[];

  constructor(
    config: Record<string, unknown>,
    private readonly extensions: Extensions,
    options: {
      /** Overrides of the config's `worker` section (e.g. `concurrency: 1`). */
      worker?: Record<string, number>;
      /** Toolboxes besides the test toolbox. */
      toolboxes?: readonly ToolBox[];
    } = {},
  ) {
    this.toolboxes = [testToolbox(), ...(options.toolboxes ?? [])];
    const path = join(this.dir, 'ratchet.json');
    const redis = { url: inject('redisUrl'), prefix: this.prefix };
    const worker = {
      lock_duration_ms: 2000,
      stalled_interval_ms: 1000,
      step_attempts: 3,
      backoff_base_ms: 50,
      ...options.worker,
    };
    writeFileSync(path, JSON.stringify({ ...config, redis, worker }));
    this.loaded = loadConfig(path, { extensions, knownToolboxes: knownToolboxes(this.toolboxes) });
    this.redis = createRedis({
      ...redisTargetOf(this.loaded.config.redis),
      logger: silentLogger(),
      name: 'test',
    });
    this.engine = engineFromConfig({ config: this.loaded.config, redis: this.redis, logger: silentLogger() });
  }

  async start(): Promise<void> {
    this.worker = new RatchetWorker({
      loaded: this.loaded,
      toolboxes: this.toolboxes,
      logger: silentLogger(),
      extensions: this.extensions,
    });
    await this.worker.start();
  }

  /** Every request the scripted models were sent (`record_calls: calls.jsonl`). */
  modelCalls(): { agent: string; messages: { id: string; role: string; text: string }[] }[] {
    const log = join(this.dir, 'calls.jsonl');
    if (!existsSync(log)) return [];
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
  }

  async close(): Promise<void> {
    await this.worker?.close(2000);
    await this.engine.close();
    await deleteKeys(this.redis, this.prefix);
    await closeRedis(this.redis);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
