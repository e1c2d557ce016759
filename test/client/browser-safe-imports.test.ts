import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// ratchet/client runs in browsers: everything it loads, type-only imports included (they end up in its
// .d.ts), must be free of Node built-ins and of the server's Redis, queue, HTTP-server and logging stack.

const repoRoot = resolve(import.meta.dirname, '../..');
const srcRoot = resolve(repoRoot, 'src');
const entry = 'client/index.ts';

/** Packages the client may load; anything else (a new dependency) must be checked and added here. */
const allowedPackages = new Set(['zod', 'eventsource-parser']);
const forbiddenFolders = ['redis/', 'worker/', 'workflows/'];
/**
 * The engine's record schemas the API's wire schemas are built from: plain zod modules. Their own imports
 * are walked like any other; the rest of src/workflows (the engine) stays out.
 */
const allowedFiles = new Set([
  'workflows/question-record.ts',
  'workflows/remembered-approval-record.ts',
  'workflows/run-record.ts',
]);
const nodeBuiltins = new Set(builtinModules);

const specifierPattern =
  /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm;

type ReadSource = (file: string) => string;

/** Every module reachable from `start` (paths relative to src), with the chain that reaches it. */
function reachable(
  start: string,
  read: ReadSource,
): { files: Map<string, string[]>; packages: Map<string, string[]> } {
  const files = new Map<string, string[]>([[start, [start]]]);
  const packages = new Map<string, string[]>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift() ?? '';
    const chain = files.get(file) ?? [];
    for (const match of read(file).matchAll(specifierPattern)) {
      const specifier = match[1] ?? match[2] ?? '';
      if (specifier.startsWith('.')) {
        const target = relative(srcRoot, resolve(srcRoot, dirname(file), specifier.replace(/\.js$/, '.ts')));
        if (!files.has(target)) {
          files.set(target, [...chain, target]);
          queue.push(target);
        }
      } else if (!packages.has(specifier)) packages.set(specifier, [...chain, specifier]);
    }
  }
  return { files, packages };
}

/** What makes the graph unfit for a browser, each with the chain of imports that brings it in. */
function browserProblems(start: string, read: ReadSource): string[] {
  const { files, packages } = reachable(start, read);
  const problems: string[] = [];
  for (const [file, chain] of files) {
    if (allowedFiles.has(file)) continue;
    if (forbiddenFolders.some((folder) => file.startsWith(folder))) problems.push(chain.join(' → '));
  }
  for (const [specifier, chain] of packages) {
    const name = specifier.startsWith('@')
      ? specifier.split('/').slice(0, 2).join('/')
      : specifier.split('/')[0];
    if (specifier.startsWith('node:') || nodeBuiltins.has(specifier) || !allowedPackages.has(name ?? '')) {
      problems.push(chain.join(' → '));
    }
  }
  return problems.sort();
}

const readSrc: ReadSource = (file) => readFileSync(resolve(srcRoot, file), 'utf8');

describe('the import graph of ratchet/client', () => {
  it('loads no Node built-in, no ioredis/bullmq/fastify/pino, nothing of src/redis, src/worker, src/workflows', () => {
    expect(browserProblems(entry, readSrc)).toEqual([]);
  });

  it('reaches the modules it is built on (the walk follows imports)', () => {
    const { files, packages } = reachable(entry, readSrc);
    expect([...files.keys()]).toEqual(
      expect.arrayContaining([
        'client/ratchet-client.ts',
        'client/event-stream.ts',
        'wire/index.ts',
        'events/event.ts',
      ]),
    );
    expect([...packages.keys()].sort()).toEqual(['eventsource-parser', 'zod']);
  });

  it('finds each kind of problem in a planted graph (the check can fail)', () => {
    const planted: Record<string, string> = {
      'client/index.ts': "export { a } from './a.js';\nimport type { B } from '../api/b.js';",
      'client/a.ts': "import { readFileSync } from 'node:fs';\nimport pino from 'pino';\nexport const a = 1;",
      'api/b.ts': "import type { Redis } from 'ioredis';\nimport { x } from '../workflows/index.js';",
      'workflows/index.ts': "import path from 'path';\nexport { y } from './run-record.js';",
      'workflows/run-record.ts': "import { z } from 'zod';\nimport { hostname } from 'node:os';",
    };
    expect(browserProblems(entry, (file) => planted[file] ?? '')).toEqual([
      'client/index.ts → api/b.ts → ioredis',
      'client/index.ts → api/b.ts → workflows/index.ts',
      'client/index.ts → api/b.ts → workflows/index.ts → path',
      'client/index.ts → api/b.ts → workflows/index.ts → workflows/run-record.ts → node:os',
      'client/index.ts → client/a.ts → node:fs',
      'client/index.ts → client/a.ts → pino',
    ]);
  });
});
