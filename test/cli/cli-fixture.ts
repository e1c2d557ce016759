import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import '../../src/models/index.js';
import { invocationOf } from '../../src/cli/invocation.js';
import { type ApiProcess, startApi } from '../../src/cli/start-api.js';
import { type LoadedConfig, loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { deleteKeys } from '../helpers/harness.js';

export const repoRoot = resolve(import.meta.dirname, '../..');
const bin = join(repoRoot, 'bin/ratchet.mjs');
/**
 * How the CLI started by spawnCli tells its user to run it (`npx ratchet`, unless this very bin is on the
 * PATH as `ratchet`): the start of the commands it suggests.
 */
export const invocation = invocationOf({ path: process.env.PATH, bin });

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Resolves when stdout (or stderr) contains the text; rejects when the process exits first. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  kill(): Promise<void>;
}

/** `ratchet <args>` as a child process, from `cwd` (default: a new empty directory, removed when it exits). */
export function spawnCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {},
): CliProcess {
  // A directory of its own by default: `ratchet run` remembers its runs in ./.ratchet/runs.jsonl.
  const ownDir = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'ratchet-cwd-')) : undefined;
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? ownDir,
    env: { ...process.env, RATCHET_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const listener of listeners) listener();
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolveExit) => {
    child.once('exit', (code) => {
      process.removeListener('exit', killOnExit);
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
      for (const listener of listeners) listener();
      resolveExit(code);
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(text, timeoutMs = 30_000) {
      return new Promise((resolveWait, reject) => {
        const matches = () =>
          typeof text === 'string' ? (stdout + stderr).includes(text) : text.test(stdout + stderr);
        const timer = setTimeout(
          () => finish(new Error(`timed out waiting for ${text}:\n${stdout}\n${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (matches()) finish();
          else if (child.exitCode !== null || child.signalCode !== null) {
            finish(new Error(`exited (${child.exitCode}) before ${text}:\n${stdout}\n${stderr}`));
          }
        };
        function finish(error?: Error) {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolveWait();
        }
        listeners.add(check);
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `ratchet <args>` to its end. */
export async function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnCli(args, { stdin: '', ...options });
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

export interface CliWorld {
  dir: string;
  prefix: string;
  configPath: string;
  loaded: LoadedConfig;
  redis: Redis;
  close(): Promise<void>;
}

/** A config of the built-in toolboxes over a scripted model, with its own key prefix. */
export function createWorld(options: {
  script: Script;
  redisUrl: string;
  /** API tokens: an operator's (a string) or one scoped to a tenant. */
  tokens?: (string | { token: string; tenant: string })[];
  /** Leave redis.url out of the file (the CLI takes REDIS_URL). */
  urlFromEnv?: boolean;
  /** Built-in toolboxes of the agent `helper` (default: utils). */
  toolboxes?: string[];
}): CliWorld {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-cli-'));
  const prefix = `t-${randomBytes(6).toString('hex')}`;
  writeFileSync(join(dir, 'script.json'), JSON.stringify(options.script));
  const config = {
    providers: [{ name: 'model', kind: 'scripted', model: 'test', script: 'script.json' }],
    agents: [
      {
        name: 'helper',
        description: 'answers',
        provider: 'model',
        toolboxes: options.toolboxes ?? ['utils'],
      },
      { name: 'other', description: 'also answers', provider: 'model', toolboxes: [] },
    ],
    redis: options.urlFromEnv ? { prefix } : { url: options.redisUrl, prefix },
    worker: { lock_duration_ms: 2000, stalled_interval_ms: 1000, step_attempts: 2, backoff_base_ms: 50 },
    ...(options.tokens ? { api: { tokens: options.tokens } } : {}),
  };
  const configPath = join(dir, 'ratchet.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const loaded = loadConfig(configPath, {
    knownToolboxes: ['utils', ...(options.toolboxes ?? [])],
    env: { ...process.env, REDIS_URL: options.redisUrl },
  });
  const redis = createRedis({ url: options.redisUrl, logger: silentLogger(), name: 'cli-test' });
  return {
    dir,
    prefix,
    configPath,
    loaded,
    redis,
    async close() {
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The API and a worker in the test process, listening on a free loopback port. */
export async function startServer(world: CliWorld): Promise<{ api: ApiProcess; close(): Promise<void> }> {
  const logger = silentLogger();
  const worker = new RatchetWorker({ loaded: world.loaded, toolboxes: [], logger });
  await worker.start();
  const api = await startApi({
    loaded: world.loaded,
    toolboxes: [],
    logger,
    host: '127.0.0.1',
    port: 0,
  });
  return {
    api,
    async close() {
      await api.close();
      await worker.close(2000);
    },
  };
}
