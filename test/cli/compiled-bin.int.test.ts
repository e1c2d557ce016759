import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { unsupportedNodeMessage } from '../../src/worker/node-version.js';
import { unsupportedNode } from '../helpers/old-node.js';
import { type CliWorld, createWorld, repoRoot } from './cli-fixture.js';

// `ratchet` as an installed package runs compiled JavaScript, never TypeScript through tsx: built here into a
// copy of the package's layout (bin/, dist/, config/, package.json) whose node_modules lacks tsx, so the bin
// can only work from dist/. The repository's own dist/ is left alone (other tests may be running its bin).

let root: string;
let world: CliWorld | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ratchet-installed-'));
  const build = spawnSync(
    process.execPath,
    [
      join(repoRoot, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      join(root, 'dist'),
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  // Type errors are the typecheck's to report; what matters here is that the JavaScript was emitted.
  if (build.error) throw build.error;
  cpSync(join(repoRoot, 'src/redis/lua'), join(root, 'dist/redis/lua'), { recursive: true });
  cpSync(join(repoRoot, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repoRoot, 'config'), join(root, 'config'));
  mkdirSync(join(root, 'node_modules'));
  for (const name of readdirSync(join(repoRoot, 'node_modules'))) {
    if (name === 'tsx' || name === '.bin') continue;
    symlinkSync(join(repoRoot, 'node_modules', name), join(root, 'node_modules', name));
  }
}, 300_000);

afterAll(async () => {
  await world?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

function ratchet(args: string[], options: { env?: NodeJS.ProcessEnv; stdin?: string } = {}) {
  return spawnSync(process.execPath, [join(root, 'bin/ratchet.mjs'), ...args], {
    cwd: world?.dir ?? tmpdir(),
    env: { ...process.env, RATCHET_LOG_LEVEL: 'warn', RATCHET_SOURCE: '', ...options.env },
    input: options.stdin ?? '',
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('the installed bin', () => {
  it('prints --help from compiled JavaScript, without tsx', () => {
    const help = ratchet(['--help']);
    expect(help.stderr).toBe('');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: (npx )?ratchet <command> \[options\]\n/);
    expect(help.stdout).toContain('attach RUN_ID');
  });

  it('runs a task end to end from dist/: config, Lua scripts, API and worker are found', () => {
    const script: Script = {
      replies: [
        { text: 'Adding.', tool_calls: [{ name: 'calculate', arguments: { expression: '2 + 3' } }] },
        { text: 'It is 5.' },
      ],
    };
    world = createWorld({ script, redisUrl: inject('redisUrl') });
    const result = ratchet(['run', '--config', world.configPath, 'What is 2 + 3?']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('✓ calculate → {"expression":"2 + 3","result":5}');
    expect(result.stdout.endsWith('\nanswer: It is 5.\n')).toBe(true);
  });

  it('refuses an unsupported Node.js with one line, from the bin and from each compiled entry point', () => {
    const oldNode = unsupportedNode();
    const version = spawnSync(oldNode, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '');
    const expected = `ratchet: ${unsupportedNodeMessage(version)}\n`;
    // dist/cli/main.js is what the container runs for the API (`node dist/cli/main.js api`).
    for (const entry of [
      'bin/ratchet.mjs',
      'dist/cli/main.js',
      'dist/worker/main.js',
      'dist/testing/test-worker-main.js',
    ]) {
      const result = spawnSync(oldNode, [join(root, entry), '--config', 'config/demo.yaml'], {
        cwd: root,
        input: '',
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ entry, stderr: result.stderr, status: result.status }).toEqual({
        entry,
        stderr: expected,
        status: 1,
      });
      expect(result.stdout).toBe('');
    }
  }, 300_000);

  it('takes the source instead when asked (RATCHET_SOURCE=1) or when src/ changed after the build', () => {
    const asked = ratchet(['--help'], { env: { RATCHET_SOURCE: '1' } });
    expect(asked.status).not.toBe(0);
    expect(asked.stderr).toMatch(/Cannot find (package|module) 'tsx'/);

    // A checkout being edited: a file under src/ newer than dist/ means the build is stale.
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src/edited.ts'), '');
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src/edited.ts'), future, future);
    const stale = ratchet(['--help']);
    expect(stale.stderr).toMatch(/Cannot find (package|module) 'tsx'/);
    expect(ratchet(['--help'], { env: { RATCHET_SOURCE: '0' } }).status).toBe(0);
    rmSync(join(root, 'src'), { recursive: true });
    expect(ratchet(['--help']).status).toBe(0);
  });
});
