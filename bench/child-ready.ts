import type { ChildProcess } from 'node:child_process';

/** Resolves when a bench's child worker process prints `ready`; rejects when it exits first or takes too long. */
export function readyLine(child: ChildProcess, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in time`)), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited before it was ready (${signal ?? code})`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}
