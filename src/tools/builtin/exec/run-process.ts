import { spawn } from 'node:child_process';

export interface RunProcessOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Cap of stdout and of stderr each; a process that writes more is killed. */
  maxOutputBytes: number;
  signal: AbortSignal;
  /**
   * Open a further pipe as the child's file descriptor 3 and return what the child writes there (the exec
   * sandbox says on it that it is set up).
   */
  reportPipe?: boolean;
}

export interface ProcessResult {
  exitCode: number | null;
  /** The signal that ended the process, e.g. SIGKILL after a timeout. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Output went over the cap: the process was killed and its output cut. */
  truncated: boolean;
  timedOut: boolean;
  /** What the child wrote on file descriptor 3 (with `reportPipe`; else empty). */
  report: string;
}

/**
 * Runs a program without a shell, in its own process group, and collects its output. On timeout, output
 * over the cap, or abort, the whole group is killed (children included) and the result is returned once
 * every pipe is closed; an abort rejects with the signal's reason.
 */
export function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  options.signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      shell: false,
      detached: true,
      stdio: options.reportPipe ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    });
    const stdout = outputBuffer(options.maxOutputBytes);
    const stderr = outputBuffer(options.maxOutputBytes);
    let timedOut = false;
    let truncated = false;
    let settled = false;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal.addEventListener('abort', onAbort, { once: true });
    const onOutput = (buffer: OutputBuffer) => (chunk: Buffer) => {
      if (!buffer.add(chunk) && !truncated) {
        truncated = true;
        killGroup();
      }
    };
    child.stdout?.on('data', onOutput(stdout));
    child.stderr?.on('data', onOutput(stderr));
    // A word from the sandbox: capped like the rest, never a reason to kill.
    const report = outputBuffer(options.maxOutputBytes);
    child.stdio[3]?.on('data', (chunk: Buffer) => report.add(chunk));
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      outcome();
    };
    child.once('error', (error) => {
      killGroup();
      finish(() => reject(new Error(`cannot run "${options.command}": ${error.message}`, { cause: error })));
    });
    child.once('close', (exitCode, signal) => {
      // Whatever the process itself did, a group member might still run: end it.
      killGroup();
      finish(() => {
        if (options.signal.aborted) reject(options.signal.reason);
        else
          resolve({
            exitCode,
            signal,
            stdout: stdout.text(),
            stderr: stderr.text(),
            truncated,
            timedOut,
            report: report.text(),
          });
      });
    });
  });
}

interface OutputBuffer {
  /** False once the stream went over the cap. */
  add(chunk: Buffer): boolean;
  text(): string;
}

/** Keeps the first `cap` bytes of a stream. */
function outputBuffer(cap: number): OutputBuffer {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk) {
      const room = cap - size;
      if (room > 0) {
        const kept = chunk.subarray(0, room);
        chunks.push(kept);
        size += kept.length;
      }
      return chunk.length <= room;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

/** The variables a tool's child process gets: enough to find programs, never the worker's secrets. */
export function minimalEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}
