import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const tsx = import.meta.resolve('tsx');

/** What an example printed, and how it ended. */
export interface ExampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `examples/<name>` as a user would (`npx tsx examples/<name>`), with `env` added to the environment. */
export async function runExample(
  name: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ExampleRun> {
  const child = spawn(
    process.execPath,
    ['--import', tsx, resolve(import.meta.dirname, '../../examples', name)],
    {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  return { code, stdout, stderr };
}
