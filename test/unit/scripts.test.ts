import { readdirSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { loadScriptSource, runScript, type ScriptName } from '../../src/redis/scripts.js';

/** Every script in src/redis/lua, so a new script is checked too. */
const scriptNames = readdirSync(new URL('../../src/redis/lua/', import.meta.url))
  .filter((file) => file.endsWith('.lua'))
  .map((file) => file.slice(0, -'.lua'.length) as ScriptName)
  .sort();

/** The `--[[ ... ]]` header of a script. */
function headerOf(source: string): string {
  const match = /^--\[\[([\s\S]*?)\]\]/.exec(source);
  if (!match?.[1]) throw new Error('script has no header');
  return match[1];
}

/** KEYS documented in the header as `KEYS[n] ...` lines. */
function documentedKeys(header: string): number[] {
  return [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((match) => Number(match[1]));
}

function usedKeys(body: string): number[] {
  return [...new Set([...body.matchAll(/KEYS\[(\d+)\]/g)].map((match) => Number(match[1])))].sort(
    (a, b) => a - b,
  );
}

/** More keys than any script with a fixed count takes. */
const maxKeys = 24;

/** The number of keys runScript accepts for a script, found by calling it with a fake client. */
async function keyCountInCode(name: ScriptName): Promise<number | 'variable'> {
  const accepted: number[] = [];
  // Every property is a script command that succeeds.
  const fake = new Proxy({}, { get: () => async () => ['OK'] }) as unknown as Redis;
  for (let count = 0; count <= maxKeys; count += 1) {
    const keys = Array.from({ length: count }, (_unused, index) => `key${index}`);
    try {
      await runScript(fake, name, keys, []);
      accepted.push(count);
    } catch (error) {
      expect((error as Error).message).toMatch(new RegExp(`^script ${name} takes \\d+ keys, got ${count}$`));
    }
  }
  // A script that takes as many keys as it is given (its header documents the fixed ones, then `KEYS[n..]`).
  if (accepted.length === maxKeys + 1) return 'variable';
  expect(accepted).toHaveLength(1);
  return accepted[0] ?? -1;
}

describe('loadScriptSource', () => {
  it('finds the scripts', () => {
    expect(scriptNames).toEqual(expect.arrayContaining(['commit-step', 'create-run']));
  });

  it.each(scriptNames)('%s: no include is left', (name) => {
    expect(loadScriptSource(name)).not.toContain('@include');
  });

  it.each(['commit-step', 'commit-tool-outcome'])('%s: the run-status include is inlined, once', (name) => {
    const source = loadScriptSource(name);
    expect(source.match(/local function runStatus\(/g)).toHaveLength(1);
    expect(source.match(/local function isFinished\(/g)).toHaveLength(1);
  });

  it.each(scriptNames)('%s: the KEYS in the header match the code', async (name) => {
    const source = loadScriptSource(name);
    const header = headerOf(source);
    const documented = documentedKeys(header);
    const count = await keyCountInCode(name);
    if (count === 'variable') {
      expect(header).toMatch(/^\s*KEYS\[\d+\.\.\]/m);
      expect(usedKeys(source.slice(source.indexOf(']]')))).toEqual(documented);
      return;
    }
    expect(count).toBeGreaterThan(0);
    // Documented as KEYS[1] .. KEYS[count], in order.
    expect(documented).toEqual(Array.from({ length: count }, (_unused, index) => index + 1));
    // The script body uses exactly those keys.
    expect(usedKeys(source.slice(source.indexOf(']]')))).toEqual(documented);
  });

  it('runScript refuses to run a script that was not defined on the client', async () => {
    const keys = Array.from({ length: 21 }, (_unused, index) => `key${index}`);
    await expect(runScript({} as Redis, 'commit-step', keys, [])).rejects.toThrow('call defineScripts first');
  });
});
