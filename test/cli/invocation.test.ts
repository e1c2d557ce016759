import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { invocationOf } from '../../src/cli/invocation.js';
import { repoRoot } from './cli-fixture.js';

const bin = join(repoRoot, 'bin/ratchet.mjs');
const dir = mkdtempSync(join(tmpdir(), 'ratchet-invocation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A directory holding `ratchet`: a link to this bin (as `npm install -g` makes), or another program. */
function dirWith(name: string, ratchet: 'this bin' | 'another program'): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  if (ratchet === 'this bin') symlinkSync(bin, join(path, 'ratchet'));
  else {
    writeFileSync(join(path, 'ratchet'), '#!/bin/sh\necho another ratchet\n');
    chmodSync(join(path, 'ratchet'), 0o755);
  }
  return path;
}

describe('invocationOf', () => {
  const globalBin = dirWith('global/bin', 'this bin');
  const projectBin = dirWith('project/node_modules/.bin', 'this bin');
  const otherBin = dirWith('other/bin', 'another program');
  const path = (...dirs: string[]) => [...dirs, '/usr/bin'].join(delimiter);

  it('is ratchet when this very program is on the PATH as ratchet (a global install, npm link)', () => {
    expect(invocationOf({ path: path(globalBin), bin })).toBe('ratchet');
    expect(invocationOf({ path: path(otherBin, globalBin), bin })).toBe('ratchet');
  });

  it('is npx ratchet in a checkout or a project: nothing, another program, or only node_modules/.bin', () => {
    expect(invocationOf({ path: path(), bin })).toBe('npx ratchet');
    expect(invocationOf({ path: undefined, bin })).toBe('npx ratchet');
    expect(invocationOf({ path: path(otherBin), bin })).toBe('npx ratchet');
    // npm and npx put the project's node_modules/.bin on the PATH of what they run; the shell has no such entry.
    expect(invocationOf({ path: path(projectBin), bin })).toBe('npx ratchet');
    expect(invocationOf({ path: path(`${projectBin}/`), bin })).toBe('npx ratchet');
  });
});
