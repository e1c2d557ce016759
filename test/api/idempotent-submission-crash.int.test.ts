import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

/**
 * Idempotent submission when the API process is SIGKILLed around the write of the run (decision 0035): the
 * API runs as a real child process (`ratchet api`), armed with a crash point; the client's retry of the
 * same submission, to a new API process, gets the run the first one wrote, or the one it writes now.
 */

const repoRoot = resolve(import.meta.dirname, '../..');

let harness: Harness | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await harness?.close();
  harness = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** `ratchet api` in a child process, ready to answer; `crashAt` arms a crash point. */
async function startApi(h: Harness, port: number, crashAt = '') {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'api', '--config', h.configPath],
    { cwd: repoRoot, env: { ...process.env, RATCHET_CRASH_AT: crashAt }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.once('exit', (_code, signal) => done(signal)),
  );
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${port}/v1/agents`).catch(() => undefined))?.ok === true,
    40_000,
    'the API to answer',
  ).catch((error: unknown) => {
    throw new Error(`the API did not start: ${String(error)}\n${output}`);
  });
  return { child, exited, output: () => output };
}

async function submit(port: number) {
  const response = await fetch(`http://127.0.0.1:${port}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'nightly-report-2026-12-06' },
    body: JSON.stringify({ input: 'write the nightly report' }),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await response.json()) as { run_id: string; session_id: string },
  };
}

async function runIds(h: Harness): Promise<string[]> {
  return (await h.engine.listRuns({ limit: 100 })).runs.map((run) => run.id);
}

describe('idempotent submission under SIGKILL of the API process', () => {
  it.each([
    ['submit.after_run_commit', 200],
    ['submit.before_run_commit', 202],
  ] as const)(
    'killed at %s, the retried submission answers %i with the one run',
    async (point, status) => {
      const port = await freePort();
      const h = new Harness({
        script: { replies: [{ text: 'done' }] },
        agent: { toolboxes: [] },
        config: { api: { port } },
      });
      harness = h;
      const doomed = await startApi(h, port, point);
      // The answer never comes: the process dies between writing the run and answering (or before writing).
      await expect(submit(port)).rejects.toThrow();
      expect(await doomed.exited).toBe('SIGKILL');
      expect(doomed.output()).toContain(`crash point ${point} reached`);
      const written = await runIds(h);
      expect(written).toHaveLength(point === 'submit.after_run_commit' ? 1 : 0);

      await startApi(h, port);
      const retried = await submit(port);
      expect(retried.status).toBe(status);
      expect(retried.replayed).toBe(status === 200 ? 'true' : null);
      const after = await runIds(h);
      expect(after).toEqual([retried.body.run_id]);
      if (written.length === 1) expect(retried.body.run_id).toBe(written[0]);
      // And once more: still that run.
      const again = await submit(port);
      expect(again).toMatchObject({ status: 200, replayed: 'true', body: retried.body });
      expect(await runIds(h)).toEqual([retried.body.run_id]);
    },
    120_000,
  );
});
