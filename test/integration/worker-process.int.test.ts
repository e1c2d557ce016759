import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function runWorker(configPath: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts', '--config', configPath], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('exit', (code) => resolveRun({ code, stderr }));
  });
}

it('the worker refuses a bad config at start, listing every problem with its path, and exits non-zero', async () => {
  dir = mkdtempSync(join(tmpdir(), 'ratchet-bad-config-'));
  const configPath = join(dir, 'bad.yaml');
  writeFileSync(
    configPath,
    [
      'providers:',
      '  - { name: default, kind: scripted, model: m, replies: [{ text: hi }] }',
      'agents:',
      '  - { name: a, provider: defualt, toolboxes: [utils, nope] }',
      'worker:',
      '  concurrency: 0',
      'colour: blue',
    ].join('\n'),
  );
  const { code, stderr } = await runWorker(configPath);
  expect(code).toBe(2);
  expect(stderr).toContain('agents[0].provider: unknown provider "defualt" (did you mean "default"?)');
  expect(stderr).toContain('agents[0].toolboxes[1]: unknown toolbox "nope"');
  expect(stderr).toContain('worker.concurrency: must be at least 1');
  expect(stderr).toContain('colour: unknown key');
});

it('the worker refuses a scripted model whose script is empty at start, naming the file, and exits 2', async () => {
  dir = mkdtempSync(join(tmpdir(), 'ratchet-bad-script-'));
  const configPath = join(dir, 'ratchet.yaml');
  writeFileSync(join(dir, 'empty.json'), '{"replies": []}');
  writeFileSync(
    configPath,
    [
      'providers:',
      '  - { name: default, kind: scripted, model: m, script: empty.json }',
      'agents:',
      '  - { name: a, provider: default, toolboxes: [utils] }',
      'redis: { prefix: bad-script }',
    ].join('\n'),
  );
  const { code, stderr } = await runWorker(configPath);
  expect(code, stderr).toBe(2);
  expect(stderr).toContain('empty.json');
  expect(stderr).toContain('the script is empty');
  expect(stderr).not.toContain('    at ');
});
