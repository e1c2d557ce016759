import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadedConfig, loadConfig } from '../config/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import '../models/index.js';
import type { Engine } from '../engine/index.js';
import { engineFromConfig } from '../engine/index.js';
import type { Script } from '../models/index.js';
import { closeRedis, createRedis, type RedisClient } from '../redis/connection.js';
import { knownToolboxes } from '../tools/builtin/index.js';
import type { ToolBox } from '../tools/index.js';
import { RatchetWorker } from '../worker/index.js';
import { type Ledger, redisLedger } from './ledger.js';
import { type RunTreeRead, readRunTree } from './run-snapshot.js';
import { loadTestWorker, moduleSpecifier } from './test-worker.js';
import { testWorkerEnv } from './test-worker-process.js';
import { spawnNodeProcess, type WorkerProcess } from './worker-process.js';

/** How a test engine is built. Every field is optional: the default is one agent on a scripted model. */
export interface TestEngineOptions {
  /**
   * The script of the scripted model `model` (added to the config's providers, or replacing one of that
   * name). Without `config.agents`, the engine has one agent, `agent`, on this model.
   */
  script?: Script;
  /** More keys of the default agent's config entry (e.g. `toolboxes: ['payments']`, `effects: [...]`). */
  agent?: Record<string, unknown>;
  /**
   * A Ratchet config (as the YAML file would hold it, as an object): providers, agents, teams and the rest.
   * Its `redis` section is replaced (a key prefix of the engine's own) and its `worker` section gets short
   * lock and stall durations, so a killed worker's step is taken over within seconds. Relative paths in it
   * resolve against a temporary directory: give absolute ones.
   */
  config?: Record<string, unknown>;
  /**
   * A module whose default export is made with `defineTestWorker`: your toolboxes and extensions, which every worker of
   * the engine (in this process or a child process) loads. A path (absolute, or relative to the working
   * directory) or a URL such as `new URL('./my-tools.ts', import.meta.url)`.
   */
  worker?: string | URL;
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. Each engine uses a key prefix of its own there. */
  redisUrl?: string;
  /**
   * Node options of worker processes (e.g. `['--import', 'tsx']` for a worker module in TypeScript that
   * Node cannot run by itself). Default: none, or tsx when Ratchet itself runs from its sources.
   */
  nodeOptions?: readonly string[];
}

/** One request to the scripted model, as its call log has it. */
export interface ModelCall {
  run_id: string;
  agent: string;
  iteration: number;
  attempt: number;
  pid: number;
  /** `summary` for a compaction's summary request. */
  purpose?: 'summary';
}

/** What starts a run: its input, and the agent or team (default: the config's entry agent). */
export interface TestTask {
  input: string;
  agent?: string;
}

/**
 * A Ratchet on the real Redis for tests: its own key prefix and temporary directory, a scripted model that
 * logs every request, short lock durations, workers in this process or in child processes (which a test
 * may SIGKILL), and a side-effect ledger. `close()` removes everything it made.
 */
export interface TestEngine {
  readonly engine: Engine;
  readonly redis: RedisClient;
  readonly loaded: LoadedConfig;
  readonly ledger: Ledger;
  /** The key prefix of everything this engine stores. */
  readonly prefix: string;
  /** Starts a run of the task. */
  start(task: string | TestTask): Promise<{ runId: string; sessionId: string }>;
  /** A worker in this process. */
  startWorker(options?: { logger?: Logger }): Promise<RatchetWorker>;
  /**
   * A worker in a child process; with `crashAt` (`point` or `point@N`), it SIGKILLs itself there. `held`:
   * it loads everything, then waits for `release()` before taking jobs (so it can be started ahead).
   */
  spawnWorker(options?: { crashAt?: string; held?: boolean }): WorkerProcess;
  /** Every request made to the scripted models so far, by every worker. */
  modelCalls(): ModelCall[];
  /** A run and the runs below it, comparable with another execution of the same task. */
  snapshot(sessionId: string, runId: string): Promise<RunTreeRead>;
  close(): Promise<void>;
}

const defaultRedisUrl = 'redis://127.0.0.1:6379';

/** Builds a test engine (see TestEngine). */
export async function createTestEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-testing-'));
  const prefix = `rt-${randomBytes(6).toString('hex')}`;
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL ?? defaultRedisUrl;
  const configPath = join(dir, 'ratchet.json');
  const callsLog = join(dir, 'model-calls.jsonl');
  writeFileSync(configPath, JSON.stringify(testConfig(options, { redisUrl, prefix, callsLog }), null, 2));
  const redis = createRedis({ url: redisUrl, logger: silentLogger(), name: 'ratchet-testing' });
  const ledger = redisLedger(redis, prefix);
  const workers: RatchetWorker[] = [];
  const processes: WorkerProcess[] = [];
  let engine: Engine | undefined;
  const close = async () => {
    await Promise.allSettled(workers.map((worker) => worker.close(2000)));
    await Promise.allSettled(processes.map((worker) => worker.kill()));
    await engine?.close();
    await deleteKeys(redis, prefix);
    await closeRedis(redis);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const setup = await loadTestWorker(options.worker, { ledger });
    const toolboxes: readonly ToolBox[] = setup.toolboxes ?? [];
    const extensions = setup.extensions ? { extensions: setup.extensions } : {};
    const loaded = loadConfig(configPath, { knownToolboxes: knownToolboxes(toolboxes), ...extensions });
    const built = engineFromConfig({ config: loaded.config, redis, logger: silentLogger() });
    engine = built;
    return {
      engine: built,
      redis,
      loaded,
      ledger,
      prefix,
      start: (task) => built.startRun(typeof task === 'string' ? { input: task } : task),
      async startWorker(workerOptions = {}) {
        const worker = new RatchetWorker({
          loaded,
          toolboxes,
          ...extensions,
          logger: workerOptions.logger ?? silentLogger(),
        });
        workers.push(worker);
        await worker.start();
        return worker;
      },
      spawnWorker(spawnOptions = {}) {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          [testWorkerEnv.redisUrl]: redisUrl,
          [testWorkerEnv.prefix]: prefix,
          [testWorkerEnv.module]: options.worker === undefined ? '' : moduleSpecifier(options.worker),
          RATCHET_LOG_LEVEL: 'warn',
        };
        delete env.RATCHET_CRASH_AT;
        if (spawnOptions.crashAt) env.RATCHET_CRASH_AT = spawnOptions.crashAt;
        if (spawnOptions.held) env[testWorkerEnv.held] = '1';
        const worker = spawnNodeProcess({
          args: [...workerNodeOptions(options), workerEntry(), '--config', configPath],
          env,
          held: spawnOptions.held === true,
        });
        processes.push(worker);
        return worker;
      },
      modelCalls: () => readJsonLines<ModelCall>(callsLog),
      snapshot: (sessionId, runId) => readRunTree({ engine: built, redis }, sessionId, runId),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The `worker` section of a test config: short locks, so a killed worker's step is taken over within
 * seconds, and short backoffs.
 */
export const testWorkerSettings = {
  concurrency: 10,
  lock_duration_ms: 2000,
  stalled_interval_ms: 1000,
  step_attempts: 3,
  backoff_base_ms: 50,
  backoff_max_ms: 500,
  shutdown_timeout_ms: 5000,
} as const;

/** The config a test engine writes: the user's, with a scripted model, the engine's Redis and short locks. */
export function testConfig(
  options: Pick<TestEngineOptions, 'config' | 'script' | 'agent'>,
  place: { redisUrl: string; prefix: string; callsLog: string },
): Record<string, unknown> {
  const config = options.config ?? {};
  const given = Array.isArray(config.providers) ? (config.providers as Record<string, unknown>[]) : [];
  const providers = [
    ...given.filter((provider) => options.script === undefined || provider.name !== 'model'),
    ...(options.script === undefined
      ? []
      : [{ name: 'model', kind: 'scripted', model: 'test', ...options.script }]),
  ].map((provider) =>
    provider.kind === 'scripted' ? { ...provider, record_calls: place.callsLog } : provider,
  );
  const agents = config.agents ?? [
    {
      name: 'agent',
      description: 'the agent under test',
      instructions: 'You are the agent under test.',
      provider: 'model',
      options: { max_iterations: 10 },
      ...options.agent,
    },
  ];
  return {
    ...config,
    providers,
    agents,
    redis: { url: place.redisUrl, prefix: place.prefix },
    worker: { ...testWorkerSettings, ...(config.worker as Record<string, unknown> | undefined) },
  };
}

/** Removes every key under a prefix. */
export async function deleteKeys(redis: RedisClient, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/** Ratchet runs from its TypeScript sources (its own tests) or from the compiled package. */
const fromSources = import.meta.url.endsWith('.ts');

function workerEntry(): string {
  return new URL(`./test-worker-main.${fromSources ? 'ts' : 'js'}`, import.meta.url).pathname;
}

function workerNodeOptions(options: TestEngineOptions): readonly string[] {
  if (options.nodeOptions) return options.nodeOptions;
  return fromSources ? ['--import', import.meta.resolve('tsx')] : [];
}

/** The JSON lines of a file (none if it does not exist). */
export function readJsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
