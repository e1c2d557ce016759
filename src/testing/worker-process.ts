import { type ChildProcess, spawn } from 'node:child_process';

/** A worker in a child process, which a test can SIGKILL for real. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
  /** Lets a worker spawned `held` start taking jobs (it has loaded its modules meanwhile). */
  release(): void;
}

/**
 * Starts `node <args>` with its output collected. The process is SIGKILLed if this one exits first, so a
 * test that fails never leaves a worker behind.
 */
export function spawnNodeProcess(options: {
  args: readonly string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Keeps its stdin open, for `release()`. */
  held?: boolean;
}): WorkerProcess {
  const child = spawn(process.execPath, options.args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: options.env,
    stdio: [options.held ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => {
      process.removeListener('exit', killOnExit);
      resolveExit({ code, signal });
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    exited,
    async stop() {
      if (running()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    release() {
      child.stdin?.end('go\n');
    },
  };
}
