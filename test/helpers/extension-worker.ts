import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');

/** A worker process started from a test fixture module, with its output and its exit. */
export interface ExtensionWorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `node --import tsx <fixture> --config <dir>/ratchet.json`: a worker process of an ExtensionWorld's config
 * whose extensions the fixture registers (test/fixtures/*-worker.ts), armed with a crash point or not; `extraEnv`:
 * more variables the fixture reads.
 */
export function spawnExtensionWorker(
  world: { dir: string },
  fixture: string,
  crashAt?: string,
  extraEnv: NodeJS.ProcessEnv = {},
): ExtensionWorkerProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, RATCHET_LOG_LEVEL: 'info', ...extraEnv };
  delete env.RATCHET_CRASH_AT;
  if (crashAt) env.RATCHET_CRASH_AT = crashAt;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, fixture), '--config', join(world.dir, 'ratchet.json')],
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  return { child, output: () => output, exited };
}
