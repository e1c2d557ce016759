import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import '../../src/models/index.js';
import type { Message } from '../../src/chat/index.js';
import { type LoadedConfig, loadConfig } from '../../src/config/index.js';
import { type Engine, engineFromConfig } from '../../src/engine/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { type Logger, silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { closeRedis, createRedis, type RedisClient, redisTargetOf } from '../../src/redis/connection.js';
import { comparableEvent, withoutExecutionTimes } from '../../src/testing/run-snapshot.js';
import { deleteKeys, readJsonLines, testWorkerSettings } from '../../src/testing/test-engine.js';
import { spawnNodeProcess, type WorkerProcess } from '../../src/testing/worker-process.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { altToolbox, testToolbox } from '../fixtures/test-tools.js';

const repoRoot = resolve(import.meta.dirname, '../..');

/** An agent of a multi-agent harness, with a scripted model of its own; other keys go to its config entry. */
export interface HarnessAgent {
  name: string;
  script: Script;
  [key: string]: unknown;
}

export interface HarnessOptions {
  /** The script of the one agent `agent` (not used with `agents`). */
  script?: Script;
  /** Several agents instead of `agent`, each with a scripted model `model-<name>`; the first is the entry. */
  agents?: HarnessAgent[];
  maxIterations?: number;
  instructions?: string;
  /** Overrides of the config's `worker` section (tests default to short locks and backoffs). */
  worker?: Record<string, number>;
  /** Extra keys of the agent's config (e.g. `tools: { charge_card: { requires_approval: true } }`). */
  agent?: Record<string, unknown>;
  /** Extra keys of the provider's config (e.g. `rate_limit`). */
  provider?: Record<string, unknown>;
  /** Another provider entry instead of the scripted one (its name must stay `model`). */
  providerEntry?: Record<string, unknown>;
  /** More top-level config sections (e.g. `pricing`). */
  config?: Record<string, unknown>;
  redisUrl?: string;
}

export type { WorkerProcess };

/** One isolated Ratchet per test: its own key prefix, config file, call log and effect log. */
export class Harness {
  readonly dir: string;
  readonly prefix: string;
  readonly configPath: string;
  readonly callsLog: string;
  readonly effectLog: string;
  readonly loaded: LoadedConfig;
  readonly redis: RedisClient;
  readonly engine: Engine;
  private readonly workers: RatchetWorker[] = [];
  private readonly processes: WorkerProcess[] = [];

  constructor(options: HarnessOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'ratchet-test-'));
    this.prefix = `t-${randomBytes(6).toString('hex')}`;
    this.configPath = join(this.dir, 'ratchet.json');
    this.callsLog = join(this.dir, 'calls.jsonl');
    this.effectLog = join(this.dir, 'effects.jsonl');
    const redisUrl = options.redisUrl ?? inject('redisUrl');
    writeFileSync(join(this.dir, 'script.json'), JSON.stringify(options.script ?? { replies: [] }));
    const scripted = {
      providers: [
        options.providerEntry ?? {
          name: 'model',
          kind: 'scripted',
          model: 'test',
          script: 'script.json',
          record_calls: 'calls.jsonl',
          ...options.provider,
        },
      ],
      agents: [
        {
          name: 'agent',
          description: 'the agent under test',
          instructions: options.instructions ?? 'You are a test agent.',
          provider: 'model',
          toolboxes: ['test', 'utils'],
          options: { max_iterations: options.maxIterations ?? 10 },
          ...options.agent,
        },
      ],
    };
    const config = {
      ...(options.agents ? multiAgentEntries(options.agents) : scripted),
      redis: { url: redisUrl, prefix: this.prefix },
      worker: { ...testWorkerSettings, ...options.worker },
    };
    writeFileSync(this.configPath, JSON.stringify({ ...config, ...options.config }, null, 2));
    this.loaded = loadConfig(this.configPath, {
      knownToolboxes: knownToolboxes([testToolbox(), altToolbox()]),
    });
    this.redis = createRedis({
      ...redisTargetOf(this.loaded.config.redis),
      logger: silentLogger(),
      name: 'test',
    });
    this.engine = engineFromConfig({ config: this.loaded.config, redis: this.redis, logger: silentLogger() });
  }

  /** A worker in this process. */
  async startWorker(options: { logger?: Logger } = {}): Promise<RatchetWorker> {
    const worker = new RatchetWorker({
      loaded: this.loaded,
      toolboxes: [testToolbox({ effectLog: this.effectLog }), altToolbox()],
      logger: options.logger ?? silentLogger(),
    });
    this.workers.push(worker);
    await worker.start();
    return worker;
  }

  /** A worker in a child process (real SIGKILL), optionally armed with crash points. */
  spawnWorker(
    options: {
      crashAt?: string;
      env?: NodeJS.ProcessEnv;
      /** Another config file (another generation of workers) instead of the harness's own. */
      configPath?: string;
      /** Another worker entry file run through tsx (e.g. test/fixtures/middleware-worker.ts). */
      entry?: string;
    } = {},
  ): WorkerProcess {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      RATCHET_LOG_LEVEL: 'info',
      ...options.env,
      RATCHET_TEST_EFFECT_LOG: this.effectLog,
    };
    delete env.RATCHET_CRASH_AT;
    if (options.crashAt) env.RATCHET_CRASH_AT = options.crashAt;
    const worker = spawnNodeProcess({
      args: [
        ...(options.entry ? ['--import', 'tsx', join(repoRoot, options.entry)] : testWorkerArgs()),
        '--config',
        options.configPath ?? this.configPath,
      ],
      cwd: repoRoot,
      env,
    });
    this.processes.push(worker);
    return worker;
  }

  /** Lines of the scripted model's call log (one per model request, across processes). */
  modelCalls(): {
    time: string;
    pid: number;
    run_id: string;
    agent: string;
    iteration: number;
    attempt: number;
    tools: string[];
    system: string;
    /** `summary` for a compaction's summary request. */
    purpose?: 'summary';
    /** What the model was sent: each message's id, role and parts as text. */
    messages: { id: string; role: string; text: string }[];
  }[] {
    return readJsonLines(this.callsLog);
  }

  effects(): { label: string; key: string; pid: number }[] {
    return readJsonLines(this.effectLog);
  }

  async transcript(sessionId: string): Promise<Message[]> {
    return this.engine.readChat(sessionId);
  }

  async events(sessionId: string): Promise<RatchetEvent[]> {
    return this.engine.readEvents(sessionId);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((worker) => worker.close(2000)));
    await Promise.allSettled(this.processes.map((worker) => worker.kill()));
    await this.engine.close();
    await deleteKeys(this.redis, this.prefix);
    await closeRedis(this.redis);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function multiAgentEntries(agents: readonly HarnessAgent[]) {
  return {
    providers: agents.map((agent) => ({
      name: `model-${agent.name}`,
      kind: 'scripted',
      model: 'test',
      ...agent.script,
      record_calls: 'calls.jsonl',
    })),
    agents: agents.map(({ name, script: _script, ...extra }) => ({
      name,
      description: `the ${name} agent`,
      instructions: `You are ${name}.`,
      provider: `model-${name}`,
      toolboxes: ['test'],
      ...extra,
    })),
  };
}

/** Shared with `ratchet/testing` (src/testing), where they live. */
export { deleteKeys, withoutExecutionTimes };

/** Messages without what legitimately differs between two executions of one scenario (run ids, times). */
export function normalizeTranscript(messages: readonly Message[], runId: string) {
  return messages.map((message) => ({
    ...JSON.parse(withoutExecutionTimes(JSON.stringify(message).replaceAll(runId, 'RUN'))),
    created_at: 'T',
  }));
}

/** Events without ids and times (src/testing's comparableEvent), sorted: equal multisets mean nothing lost and nothing duplicated. */
export function normalizeEvents(events: readonly RatchetEvent[], runId: string): string[] {
  return events
    .map((event) => withoutExecutionTimes(JSON.stringify(comparableEvent(event)).replaceAll(runId, 'RUN')))
    .sort();
}

/**
 * How a test worker process is started: the bundle the test run built (test/helpers/worker-bundle.ts), or
 * the TypeScript sources through tsx where there is none (a file run outside the integration project).
 */
function testWorkerArgs(): string[] {
  let bundle: string | undefined;
  try {
    bundle = inject('workerBundle');
  } catch {
    bundle = undefined;
  }
  return bundle
    ? ['--enable-source-maps', bundle]
    : ['--import', 'tsx', join(repoRoot, 'test/fixtures/test-worker.ts')];
}
