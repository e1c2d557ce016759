import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as library from '../../src/index.js';

// What `import … from 'ratchet'` offers is documented: every value the package's main entry exports is named
// in docs/extending.md's list, and the list names nothing else.

const repoRoot = resolve(import.meta.dirname, '../..');

function documentedExports(): string[] {
  const doc = readFileSync(resolve(repoRoot, 'docs/extending.md'), 'utf8');
  const section = /^## What the package exports\n([\s\S]*?)^- `ratchet\/client`/m.exec(doc)?.[1];
  if (section === undefined)
    throw new Error('docs/extending.md has no list under ## What the package exports');
  return [...section.matchAll(/`(\w+)`/g)].map(([, name]) => name ?? '');
}

describe("the 'ratchet' entry", () => {
  it('exports what docs/extending.md lists, ensureRedis and the chat readers the examples use included', () => {
    const exported = Object.keys(library).sort();
    expect(exported).toEqual(expect.arrayContaining(['ensureRedis', 'DEFAULT_REDIS_URL', 'toolResultsOf']));
    const documented = documentedExports().filter((name) => name !== 'ratchet' && name !== 'Message');
    expect([...new Set(documented)].sort()).toEqual(exported);
  });
});
