import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsupportedNodeMessage } from '../../src/worker/node-version.js';
import { unsupportedNode } from '../helpers/old-node.js';

// Started on a Node.js it does not support, every entry point stops at once with the same one line, before
// anything else loads: the `ratchet` bin, and the worker, CLI (the API's) and test worker entries, run from
// source through tsx (which runs on Node 20). A real old Node runs them. (The compiled entries:
// compiled-bin.int.test.ts.)

const repoRoot = resolve(import.meta.dirname, '../..');
const tsx = import.meta.resolve('tsx');

let oldNode: string;
let oldVersion: string;
let cwd: string;

beforeAll(() => {
  oldNode = unsupportedNode();
  oldVersion = spawnSync(oldNode, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '');
  cwd = mkdtempSync(join(tmpdir(), 'ratchet-old-node-'));
}, 300_000);

afterAll(() => {
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

function runOn(node: string, args: readonly string[]) {
  return spawnSync(node, args, {
    cwd,
    env: { ...process.env, RATCHET_LOG_LEVEL: 'warn' },
    input: '',
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('an unsupported Node.js', () => {
  it('is refused by the ratchet bin with one line naming the supported versions and how to get one', () => {
    const expected = `ratchet: ${unsupportedNodeMessage(oldVersion)}\n`;
    expect(expected).toContain('Node.js 22 (22.18 or later) or 24 and later');
    for (const args of [['--help'], ['dev'], ['worker', '--config', 'config/demo.yaml']]) {
      const result = runOn(oldNode, [join(repoRoot, 'bin/ratchet.mjs'), ...args]);
      expect(result.stderr).toBe(expected);
      expect(result.stdout).toBe('');
      expect(result.status).toBe(1);
    }
  });

  it('is refused the same way by the worker, CLI and test worker entries, before they load anything else', () => {
    const expected = `ratchet: ${unsupportedNodeMessage(oldVersion)}\n`;
    for (const entry of ['src/worker/main.ts', 'src/cli/main.ts', 'src/testing/test-worker-main.ts']) {
      const result = runOn(oldNode, ['--import', tsx, join(repoRoot, entry), '--config', 'config/demo.yaml']);
      expect({ entry, stderr: result.stderr, status: result.status }).toEqual({
        entry,
        stderr: expected,
        status: 1,
      });
      expect(result.stdout).toBe('');
    }
  });

  it('the Node.js running the suite is let through by the bin', () => {
    const result = runOn(process.execPath, [join(repoRoot, 'bin/ratchet.mjs'), '--help']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: (npx )?ratchet <command> \[options\]/);
  });
});
