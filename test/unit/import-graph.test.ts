import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const srcRoot = resolve(import.meta.dirname, '../../src');
const importPattern = /^(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm;

/** Every file of src and the files it imports (type-only imports included), as paths relative to src. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(srcRoot, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(srcRoot, file), 'utf8');
    const targets = [...text.matchAll(importPattern)].map(([, specifier]) =>
      relative(srcRoot, resolve(srcRoot, dirname(file), (specifier ?? '').replace(/\.js$/, '.ts'))),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** The cycles of the graph, each as the files around it (depth-first search, one cycle per back edge). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target) && graph.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

/** The imports (type-only included) from files under `from` to files under any of `to`, as "file → target". */
function importsBetween(graph: Map<string, string[]>, from: string, to: readonly string[]): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith(`${from}/`)
      ? targets
          .filter((target) => to.some((folder) => target.startsWith(`${folder}/`)))
          .map((target) => `${file} → ${target}`)
      : [],
  );
}

describe('the import graph of src', () => {
  const graph = importGraph();

  it('has no cycle, type-only imports included', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    const planted = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cyclesOf(planted)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('finds an import that runs back up the layers when there is one (the check can fail)', () => {
    const planted = new Map([
      ['tools/tool.ts', ['tools/toolbox.ts', 'redis/memory-store.ts']],
      ['redis/memory-store.ts', ['tools/index.ts']],
    ]);
    expect(importsBetween(planted, 'tools', ['redis'])).toEqual(['tools/tool.ts → redis/memory-store.ts']);
    expect(importsBetween(planted, 'redis', ['mcp', 'cli'])).toEqual([]);
  });

  it('keeps src/tools free of src/redis, type imports included: the toolboxes own their ports', () => {
    expect(importsBetween(graph, 'tools', ['redis'])).toEqual([]);
  });

  it('keeps the extension contracts (src/extensions) free of the engine (src/workflows)', () => {
    expect(importsBetween(graph, 'extensions', ['workflows'])).toEqual([]);
  });

  it('keeps src/config free of src/tools, and src/models free of src/config', () => {
    expect(importsBetween(graph, 'config', ['tools'])).toEqual([]);
    expect(importsBetween(graph, 'models', ['config'])).toEqual([]);
  });

  it('keeps the shell (src/redis) free of the CLI and MCP that sit above it', () => {
    expect(importsBetween(graph, 'redis', ['cli', 'mcp'])).toEqual([]);
  });

  it('keeps the API free of the MCP server that is built on it (both are mounted by src/server)', () => {
    const fromApi = [...graph].flatMap(([file, targets]) =>
      file.startsWith('api/')
        ? targets.filter((target) => target.startsWith('mcp/')).map((target) => `${file} → ${target}`)
        : [],
    );
    expect(fromApi).toEqual([]);
  });

  it('lets code outside src/workflows reach the engine only through its public face (workflows/index.ts)', () => {
    // The shell (src/redis) stores the engine's records, so it reads their schemas and the pure core; it
    // never reaches the engine's logic (engine.ts, the steps), which talks to it.
    const shellMayRead = (target: string) =>
      !target.startsWith('workflows/steps/') && target !== 'workflows/engine.ts';
    // The persisted records' schemas (pure zod) are shapes, not engine: the API's wire schemas read them
    // directly, since those are shared with the typed client, which must not load the engine in a browser.
    const isRecordSchema = (target: string) => /^workflows\/[a-z-]+-record\.ts$/.test(target);
    const deep = [...graph].flatMap(([file, targets]) =>
      file.startsWith('workflows/')
        ? []
        : file.startsWith('redis/')
          ? targets
              .filter((target) => target.startsWith('workflows/') && !shellMayRead(target))
              .map((target) => `${file} → ${target}`)
          : targets
              .filter(
                (target) =>
                  target.startsWith('workflows/') &&
                  target !== 'workflows/index.ts' &&
                  !isRecordSchema(target),
              )
              .map((target) => `${file} → ${target}`),
    );
    expect(deep).toEqual([]);
  });

  it('keeps Redis out of the step kinds: they read and commit through their step store (type imports aside)', () => {
    const stepsDir = join(srcRoot, 'workflows/steps');
    const valueImports = readdirSync(stepsDir)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        [...readFileSync(join(stepsDir, file), 'utf8').matchAll(/^import (?!type )[^;]*?from '([^']+)'/gm)]
          .map(([, specifier]) => specifier ?? '')
          .filter((specifier) => /(^|\/)redis\//.test(specifier) || specifier === 'ioredis')
          .map((specifier) => `${file} → ${specifier}`),
      );
    expect(valueImports).toEqual([]);
  });

  it('keeps every Redis command in src/redis: nothing else imports ioredis or the Lua runner as a value', () => {
    const files = readdirSync(srcRoot, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.startsWith('redis/'),
    );
    const valueImports = files.flatMap((file) =>
      [...readFileSync(join(srcRoot, file), 'utf8').matchAll(/^import (?!type )[^;]*?from '([^']+)'/gm)]
        .map(([, specifier]) => specifier ?? '')
        .filter((specifier) => specifier === 'ioredis' || /(^|\/)redis\/scripts\.js$/.test(specifier))
        .map((specifier) => `${file} → ${specifier}`),
    );
    expect(valueImports).toEqual([]);
  });
});
