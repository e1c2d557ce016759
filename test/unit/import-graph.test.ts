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

/** The ports the steps declare and src/redis implements (the shell may import these, and no other step file). */
const stepPorts = [
  'workflows/steps/runner/step-store.ts',
  'workflows/steps/runner/step-commit.ts',
  'workflows/steps/runner/rate-limiter.ts',
];

/** The imports of files under `from` (a folder of src) into any of the folders `into`, as `file → target`. */
function importsInto(graph: Map<string, string[]>, from: string, into: readonly string[]): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith(from)
      ? targets
          .filter((target) => into.some((folder) => target.startsWith(folder)))
          .map((target) => `${file} → ${target}`)
      : [],
  );
}

/**
 * The layering of src's top-level folders, bottom first (docs/architecture.md draws the same table): a folder
 * imports only folders of lower layers, type imports included, so the folders import one another without a
 * cycle. A new folder takes its place here.
 */
const layers: readonly (readonly string[])[] = [
  ['version.ts'],
  ['secrets'],
  ['errors', 'log'],
  ['schemas'],
  ['http'],
  ['chat'],
  ['models'],
  ['config'],
  ['events'],
  ['extensions'],
  ['tools'],
  ['skills'],
  ['workflows'],
  ['redis'],
  ['telemetry'],
  ['engine'],
  ['wire'],
  ['client'],
  ['api'],
  ['mcp'],
  ['worker', 'server'],
  ['testing'],
  ['cli', 'console'],
  ['known-kinds.ts'],
  ['index.ts'],
];

/** The imports that do not go down the layering, as `file → target`, and the folders the table lacks. */
function layeringBreaches(graph: Map<string, string[]>): { upward: string[]; unplaced: string[] } {
  const layerOf = new Map(layers.flatMap((folders, layer) => folders.map((folder) => [folder, layer])));
  const folderOf = (file: string) => file.split('/')[0] ?? file;
  const unplaced = new Set<string>();
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    const from = layerOf.get(folderOf(file));
    if (from === undefined) unplaced.add(folderOf(file));
    for (const target of targets) {
      if (folderOf(target) === folderOf(file)) continue;
      const to = layerOf.get(folderOf(target));
      if (to === undefined) unplaced.add(folderOf(target));
      else if (from !== undefined && to >= from) upward.push(`${file} → ${target}`);
    }
  }
  return { upward, unplaced: [...unplaced] };
}

describe('the import graph of src', () => {
  const graph = importGraph();

  it('keeps the top-level folders in their layers: each imports only folders below it, type imports included', () => {
    expect(layeringBreaches(graph)).toEqual({ upward: [], unplaced: [] });
  });

  it('finds an import that runs up the layers, or a folder with no layer (the check can fail)', () => {
    const planted = new Map([
      ['workflows/a.ts', ['chat/b.ts', 'redis/c.ts']],
      ['redis/c.ts', ['workflows/a.ts']],
      ['newroom/d.ts', ['log/e.ts']],
    ]);
    expect(layeringBreaches(planted)).toEqual({
      upward: ['workflows/a.ts → redis/c.ts'],
      unplaced: ['newroom'],
    });
  });

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

  it('keeps the client off the server: it speaks the wire contract (src/wire), never src/api', () => {
    expect(importsInto(graph, 'client/', ['api/'])).toEqual([]);
  });

  it('keeps the wire contract below all that speak it: no API, client, MCP, engine or Redis in src/wire', () => {
    expect(importsInto(graph, 'wire/', ['api/', 'client/', 'mcp/', 'engine/', 'redis/'])).toEqual([]);
  });

  it('finds an import into a forbidden folder, type-only ones included (the check can fail)', () => {
    const planted = new Map([
      ['client/a.ts', ['wire/index.ts', 'api/b.ts']],
      ['wire/c.ts', ['events/event.ts', 'redis/keys.ts']],
      ['api/b.ts', ['client/a.ts']],
    ]);
    expect(importsInto(planted, 'client/', ['api/'])).toEqual(['client/a.ts → api/b.ts']);
    expect(importsInto(planted, 'wire/', ['api/', 'redis/'])).toEqual(['wire/c.ts → redis/keys.ts']);
  });

  it('finds an import that runs back up the layers when there is one (the check can fail)', () => {
    const planted = new Map([
      ['tools/tool.ts', ['tools/toolbox.ts', 'redis/memory-store.ts']],
      ['redis/memory-store.ts', ['tools/index.ts']],
    ]);
    expect(importsInto(planted, 'tools/', ['redis/'])).toEqual(['tools/tool.ts → redis/memory-store.ts']);
    expect(importsInto(planted, 'redis/', ['mcp/', 'cli/'])).toEqual([]);
  });

  it('keeps src/tools free of src/redis, type imports included: the toolboxes own their ports', () => {
    expect(importsInto(graph, 'tools/', ['redis/'])).toEqual([]);
  });

  it('keeps the extension contracts (src/extensions) free of the engine (src/workflows)', () => {
    expect(importsInto(graph, 'extensions/', ['workflows/'])).toEqual([]);
  });

  it('keeps src/config free of src/tools, and src/models free of src/config', () => {
    expect(importsInto(graph, 'config/', ['tools/'])).toEqual([]);
    expect(importsInto(graph, 'models/', ['config/'])).toEqual([]);
  });

  it('keeps the shell (src/redis) free of the CLI and MCP that sit above it', () => {
    expect(importsInto(graph, 'redis/', ['cli/', 'mcp/'])).toEqual([]);
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
    // The shell (src/redis) stores the engine's records, so it reads their schemas and the pure core, and it
    // implements the ports the steps declare; it never reaches the engine's logic (the steps).
    const shellMayRead = (target: string) =>
      !target.startsWith('workflows/steps/') || stepPorts.includes(target);
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

  it('lets code outside src/engine reach the client face only through its public face (engine/index.ts)', () => {
    const deep = [...graph].flatMap(([file, targets]) =>
      file.startsWith('engine/')
        ? []
        : targets
            .filter((target) => target.startsWith('engine/') && target !== 'engine/index.ts')
            .map((target) => `${file} → ${target}`),
    );
    expect(deep).toEqual([]);
  });

  it('builds the client face above the shell: nothing it composes imports src/engine, types included', () => {
    // The folders below the client face (the pure core, the steps, the shell, telemetry …) never reach up
    // into it; what they need of it is a port declared beside them (telemetry's ScrapedSystemState).
    const below = [
      'secrets',
      'errors',
      'log',
      'schemas',
      'http',
      'chat',
      'models',
      'config',
      'events',
      'extensions',
      'tools',
      'skills',
      'workflows',
      'redis',
      'telemetry',
    ];
    const upward = [...graph].flatMap(([file, targets]) =>
      below.includes(file.split('/')[0] ?? '')
        ? targets.filter((target) => target.startsWith('engine/')).map((target) => `${file} → ${target}`)
        : [],
    );
    expect(upward).toEqual([]);
    // And the client face reaches none of the folders built on it.
    const above = ['wire', 'client', 'api', 'mcp', 'worker', 'server', 'testing', 'cli', 'console'];
    const fromEngine = [...graph].flatMap(([file, targets]) =>
      file.startsWith('engine/')
        ? targets
            .filter((target) => above.includes(target.split('/')[0] ?? '') || target === 'index.ts')
            .map((target) => `${file} → ${target}`)
        : [],
    );
    expect(fromEngine).toEqual([]);
  });

  it('keeps Redis out of src/workflows, type imports included: the steps and the core call ports they declare', () => {
    const toRedis = [...graph].flatMap(([file, targets]) =>
      file.startsWith('workflows/')
        ? targets.filter((target) => target.startsWith('redis/')).map((target) => `${file} → ${target}`)
        : [],
    );
    expect(toRedis).toEqual([]);
    const ioredis = [...graph.keys()].filter(
      (file) =>
        file.startsWith('workflows/') && /from 'ioredis'/.test(readFileSync(join(srcRoot, file), 'utf8')),
    );
    expect(ioredis).toEqual([]);
  });

  it('composes the iteration in one place: no stage of it imports another stage', () => {
    const isStage = (file: string) => /^workflows\/steps\/iteration\/[a-z-]+-stage\.ts$/.test(file);
    const stages = [...graph.keys()].filter(isStage);
    expect(stages.length).toBeGreaterThan(8);
    const stageToStage = stages.flatMap((file) =>
      (graph.get(file) ?? []).filter(isStage).map((target) => `${file} → ${target}`),
    );
    expect(stageToStage).toEqual([]);
  });

  it('keeps Redis keys out of the steps: a step names what it reads and writes, its store decides where', () => {
    // A tool call's idempotency key is the tool API's (ToolContext.idempotencyKey), not a Redis key.
    const keyNames = [...graph.keys()]
      .filter((file) => file.startsWith('workflows/steps/'))
      .flatMap((file) =>
        [...readFileSync(join(srcRoot, file), 'utf8').matchAll(/\b\w*Keys?\b|\bkeys\.\w+/g)]
          .map(([name]) => name)
          .filter((name) => name !== 'idempotencyKey')
          .map((name) => `${file}: ${name}`),
      );
    expect(keyNames).toEqual([]);
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
