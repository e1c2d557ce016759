import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { ApiHarness } from '../api/api-harness.js';
import { type CliWorld, createWorld } from '../cli/cli-fixture.js';
import { exampleFiles, withPackageNames } from '../helpers/package-examples.js';

// The package as users get it: `npm pack` (whose prepare script builds dist/), then `npm install` of the
// tarball into an empty project, where `import { RatchetClient } from 'ratchet/client'` must type-check and
// run against a live API, the README's example must run as written, and the `ratchet` bin must run compiled
// JavaScript. The package is packed from a copy of the sources, so the repository's own dist/ (which other
// tests' `ratchet` may be running) is left alone. One install, from the npm registry through the machine's
// npm cache: without either, the test fails saying so.

const repoRoot = resolve(import.meta.dirname, '../..');

interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
}

let work: string;
let app: string;
let tarball: string;
let packedFiles: string[];
let installed: string;
let api: ApiHarness | undefined;
let world: CliWorld | undefined;

/** The environment of the test's own processes: Node 24 first on PATH, no npm settings inherited from `npm test`. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== 'NODE_OPTIONS' && name !== 'RATCHET_SOURCE') env[name] = value;
  }
  env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<Output>((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

/** npm, run by this Node (the `npm` on PATH may start another one). */
function npm(args: readonly string[], cwd: string): Promise<Output> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (real.endsWith('.js')) return run(process.execPath, [real, ...args], { cwd });
    return run(candidate, args, { cwd });
  }
  throw new Error('npm is not on PATH');
}

function failed(what: string, output: Output): Error {
  return new Error(
    `${what} exited ${output.code}:\n${output.stderr.slice(-3000)}\n${output.stdout.slice(-2000)}`,
  );
}

const typescriptVersion = (
  JSON.parse(readFileSync(join(repoRoot, 'node_modules/typescript/package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** A ```lang block of a doc, the first under a heading (`## Name`), as written. */
function docBlock(doc: string, heading: string, lang: string): string {
  const text = readFileSync(join(repoRoot, doc), 'utf8');
  const pattern = new RegExp(`^${heading}\\n[\\s\\S]*?^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm');
  const block = pattern.exec(text)?.[1];
  if (block === undefined) throw new Error(`${doc} has no \`\`\`${lang} block under ${heading}`);
  return block;
}

/** The README's example, as written. */
const readmeExample = () => docBlock('README.md', '## Typed client', 'ts');

/** A user's program: typed on the package's declarations alone (DOM types, no @types/node), as in a browser. */
const program = `import { RatchetApiError, RatchetClient, type Run } from 'ratchet/client';

declare const process: { env: Record<string, string | undefined> };

const client = new RatchetClient({ baseUrl: process.env.RATCHET_URL ?? 'http://127.0.0.1:8080' });
const accepted = await client.submit({ input: 'Plan a weekend in Lisbon' });
const seen: string[] = [];
for await (const event of client.events(accepted.session_id, { untilRunEnds: accepted.run_id })) {
  seen.push(event.kind);
  if (event.kind === 'ask_user') {
    await client.answer(accepted.session_id, event.data.question_id, 'Next weekend');
  }
}
const run: Run = await client.wait(accepted.run_id);
try {
  await client.get('run_unknown');
} catch (error) {
  if (error instanceof RatchetApiError) seen.push(\`\${error.status} \${error.code}\`);
}
console.log(JSON.stringify({ status: run.status, result: run.result, seen }));
`;

/** Uses the client wrongly: the declarations must say so (they are real types, not \`any\`). */
const wrongProgram = `import { RatchetClient } from 'ratchet/client';

const client = new RatchetClient({ baseUrl: 'http://127.0.0.1:8080' });
for await (const event of client.events('ses_a')) {
  if (event.kind === 'run_started') console.log(event.data.question_id);
}
const status: number = (await client.get('run_a')).status;
await client.submit({ inptu: 'typo' });
console.log(status);
`;

const appTsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    outDir: 'out',
  },
  files: ['main.ts'],
};

/** Runs a process with a hook that records every module it loads (its URL). */
async function loadedModules(command: string, args: readonly string[]) {
  const probe = join(work, 'probe.mjs');
  const record = join(work, `loaded-${randomUUID()}.json`);
  writeFileSync(
    probe,
    [
      "import { writeFileSync } from 'node:fs';",
      "import { registerHooks } from 'node:module';",
      'const loaded = [];',
      'registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });',
      "process.on('exit', () => writeFileSync(process.env.PROBE_RECORD, JSON.stringify({ loaded, execArgv: process.execArgv })));",
    ].join('\n'),
  );
  const output = await run(command, args, {
    cwd: app,
    env: childEnv({ NODE_OPTIONS: `--import=${pathToFileURL(probe).href}`, PROBE_RECORD: record }),
  });
  if (!existsSync(record)) throw failed(`${command} (no record of its modules)`, output);
  const { loaded, execArgv } = JSON.parse(readFileSync(record, 'utf8')) as {
    loaded: string[];
    execArgv: string[];
  };
  return { output, loaded, execArgv };
}

const script: Script = {
  replies: [
    { tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
    { tool_calls: [{ name: 'ask_user', arguments: { question: 'When do you travel?' } }] },
    { text: 'Lisbon, next weekend: booked.' },
  ],
};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'ratchet-package-'));
  const source = join(work, 'source');
  mkdirSync(source);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE']) {
    cpSync(join(repoRoot, entry), join(source, entry));
  }
  for (const dir of ['bin', 'config', 'scripts', 'src']) {
    cpSync(join(repoRoot, dir), join(source, dir), { recursive: true });
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(source, 'node_modules'));

  const pack = await npm(['pack', '--json', '--pack-destination', work], source);
  if (pack.code !== 0) throw failed('npm pack', pack);
  const [manifest] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[\n  {'))) as {
    filename: string;
    files: { path: string }[];
  }[];
  if (!manifest) throw new Error(`npm pack printed no manifest: ${pack.stdout}`);
  packedFiles = manifest.files.map((file) => file.path);
  tarball = join(work, manifest.filename);

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const install = await npm(
    [
      'install',
      tarball,
      `typescript@${typescriptVersion}`,
      '--prefer-offline',
      '--omit=dev',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
    ],
    app,
  );
  if (install.code !== 0) {
    const registry = (await npm(['config', 'get', 'registry'], app)).stdout.trim();
    throw failed(
      `npm install of the tarball (it needs the npm registry, ${registry}, or the packages in the npm cache)`,
      install,
    );
  }
  installed = join(app, 'node_modules/ratchet');
}, 300_000);

afterEach(async () => {
  await api?.close();
  api = undefined;
});

afterAll(async () => {
  await world?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('carries dist/ (with the client declarations, the Lua scripts and the built console), bin/, config/, README and LICENSE; no src/, test/ or source maps', () => {
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/ratchet.mjs',
      'config/demo.yaml',
      'dist/cli/main.js',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/testing/index.js',
      'dist/testing/index.d.ts',
      'dist/testing/test-worker-main.js',
      'dist/redis/lua/create-run.lua',
      'dist/console/index.html',
      'dist/console/app.js',
      'dist/console/app.css',
    ]) {
      expect(packedFiles).toContain(file);
    }
    expect(packedFiles.filter((file) => /^(src|test|scripts|bench|examples)\/|\.map$/.test(file))).toEqual(
      [],
    );
  });

  it('installs into an empty project as it was packed: nothing is built there, and neither tsx nor a src/ comes with it', () => {
    expect(existsSync(join(installed, 'dist/client/index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'tsconfig.build.json'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/tsx'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      private?: boolean;
    };
    expect(manifest.private).toBeUndefined();
  });

  it("type-checks `import { RatchetClient } from 'ratchet/client'` (NodeNext, no @types/node), and refuses a wrong use", async () => {
    writeFileSync(join(app, 'main.ts'), program);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(appTsconfig, null, 2));
    const tsc = join(app, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app });
    if (compiled.code !== 0) throw failed('tsc', compiled);
    expect(existsSync(join(app, 'out/main.js'))).toBe(true);

    writeFileSync(join(app, 'wrong.ts'), wrongProgram);
    writeFileSync(
      join(app, 'tsconfig.wrong.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['wrong.ts'] }),
    );
    const wrong = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], { cwd: app });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toMatch(/wrong\.ts\(5,.*Property 'question_id' does not exist/);
    expect(wrong.stdout).toMatch(/wrong\.ts\(7,.*error TS2322/);
    expect(wrong.stdout).toMatch(/wrong\.ts\(8,.*'inptu' does not exist/);
  }, 120_000);

  it('the compiled program completes a run against a live API and worker', async () => {
    if (!existsSync(join(app, 'out/main.js')))
      throw new Error('out/main.js: the type-check test did not compile it');
    api = await ApiHarness.start({ script });
    const result = await run(process.execPath, ['out/main.js'], {
      cwd: app,
      env: childEnv({ RATCHET_URL: api.url }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { status: string; result: string; seen: string[] };
    expect(printed.status).toBe('completed');
    expect(printed.result).toBe('Lisbon, next weekend: booked.');
    expect(printed.seen).toContain('ask_user');
    expect(printed.seen.at(-2)).toBe('run_completed');
    expect(printed.seen.at(-1)).toBe('404 not_found');
    expect(api.harness.modelCalls().at(-1)?.messages.at(-1)?.text).toContain('Next weekend');
  }, 120_000);

  it("runs the README's example as written against a live API", async () => {
    writeFileSync(join(app, 'readme-example.ts'), readmeExample());
    api = await ApiHarness.start({ script });
    // Node runs the block's TypeScript itself (type stripping); it imports the installed package by name.
    const result = await run(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'readme-example.ts'],
      { cwd: app, env: childEnv({ RATCHET_URL: api.url }) },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'agent calls add',
        'agent calls ask_user',
        'agent asks: When do you travel?',
        'completed Lisbon, next weekend: booked.',
        '',
      ].join('\n'),
    );
  }, 120_000);

  it('ratchet/client loads no Node built-in and none of the server (Redis, BullMQ, Fastify, the AI SDK)', async () => {
    const { output, loaded } = await loadedModules(process.execPath, [
      '--input-type=module',
      '-e',
      "const { RatchetClient } = await import('ratchet/client'); console.log(typeof RatchetClient);",
    ]);
    expect(output.stderr).toBe('');
    expect(output.stdout).toBe('function\n');
    const packageFiles = loaded.filter((url) => url.includes('/node_modules/ratchet/'));
    expect(packageFiles.some((url) => url.endsWith('/dist/client/index.js'))).toBe(true);
    const foreign = loaded.filter(
      (url) =>
        url.startsWith('node:') ||
        /\/node_modules\/(ioredis|bullmq|fastify|@fastify|pino|ai|@ai-sdk|@modelcontextprotocol)\//.test(url),
    );
    expect(foreign).toEqual([]);
  }, 120_000);

  it("ratchet/testing runs from the package: crashTest kills a dist/ worker process that loads the user's TypeScript module", async () => {
    expect(existsSync(join(installed, 'dist/testing/index.d.ts'))).toBe(true);
    // The user's test worker module, in TypeScript: Node 24 strips its types itself (no tsx in the app).
    writeFileSync(
      join(app, 'shop-worker.ts'),
      [
        "import { createToolBox, defineTool } from 'ratchet';",
        "import { defineTestWorker } from 'ratchet/testing';",
        "import { z } from 'zod';",
        'const cents = (input: { amount: number }): number => Math.round(input.amount * 100);',
        'export default defineTestWorker(({ ledger }) => ({',
        '  toolboxes: [',
        "    createToolBox('shop', [",
        '      defineTool({',
        "        name: 'charge',",
        "        description: 'Charges once per idempotency key.',",
        '        inputSchema: z.strictObject({ amount: z.number() }),',
        '        idempotent: true,',
        '        handler: async (context, input) => {',
        '          await ledger.recordOnce(context.idempotencyKey, cents(input));',
        '          return { charged: input.amount };',
        '        },',
        '      }),',
        '    ]),',
        '  ],',
        '}));',
      ].join('\n'),
    );
    writeFileSync(
      join(app, 'crash-test.mjs'),
      [
        "import { crashTest } from 'ratchet/testing';",
        'const report = await crashTest({',
        "  worker: new URL('./shop-worker.ts', import.meta.url),",
        `  redisUrl: ${JSON.stringify(inject('redisUrl'))},`,
        "  agent: { toolboxes: ['shop'] },",
        "  script: { replies: [{ tool_calls: [{ name: 'charge', arguments: { amount: 4.2 } }] }, { text: 'Charged.' }] },",
        "  task: 'Charge 4.20',",
        "  crashPoints: ['tool.before_commit'],",
        '});',
        'console.log(JSON.stringify({ ok: report.ok, reached: report.crashes.map((crash) => crash.reached), effects: report.reference.sideEffects.length, differences: report.differences }));',
      ].join('\n'),
    );
    const { output, loaded } = await loadedModules(process.execPath, [
      '--disable-warning=ExperimentalWarning',
      'crash-test.mjs',
    ]);
    expect(output.stderr).toBe('');
    expect(output.code).toBe(0);
    expect(JSON.parse(output.stdout)).toEqual({ ok: true, reached: [true], effects: 1, differences: [] });
    expect(loaded).toContain(pathToFileURL(join(realpathSync(installed), 'dist/testing/index.js')).href);
  }, 120_000);

  it("'ratchet' is the library entry: an effect written in code is named in a config it checks", async () => {
    expect(existsSync(join(installed, 'dist/index.d.ts'))).toBe(true);
    writeFileSync(
      join(app, 'extension.mjs'),
      [
        "import { ConfigError, defineEffect, parseConfigText } from 'ratchet';",
        "import { z } from 'zod';",
        "const upper = defineEffect({ kind: 'upper', options: z.strictObject({}), plan: () => undefined });",
        "const text = 'providers: [{ name: m, kind: scripted, model: x, replies: [{ text: hi }] }]\\nagents: [{ name: a, provider: m, effects: [{ kind: upper }] }]';",
        "const loaded = parseConfigText(text, { env: {}, configDir: '.', extensions: { effects: [upper] } });",
        'let problems = [];',
        "try { parseConfigText(text, { env: {}, configDir: '.' }); } catch (error) { if (error instanceof ConfigError) problems = error.problems; }",
        'console.log(JSON.stringify({ effects: loaded.config.agents[0].effects, problems: problems.length }));',
      ].join('\n'),
    );
    const output = await run(process.execPath, ['extension.mjs'], { cwd: app });
    expect(output.stderr).toBe('');
    expect(JSON.parse(output.stdout)).toEqual({ effects: [{ kind: 'upper', params: {} }], problems: 1 });
  }, 120_000);

  it('its ratchet bin runs compiled JavaScript: --help loads dist/, and no .ts file, tsx or TypeScript', async () => {
    const {
      output: help,
      loaded,
      execArgv,
    } = await loadedModules(join(app, 'node_modules/.bin/ratchet'), ['--help']);
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: (npx )?ratchet <command> \[options\]\n/);
    expect(loaded).toContain(pathToFileURL(join(realpathSync(installed), 'dist/cli/main.js')).href);
    expect(loaded.filter((url) => /\.[cm]?ts$|\/node_modules\/(tsx|typescript)\//.test(url))).toEqual([]);
    expect(execArgv.join(' ')).not.toMatch(/tsx|loader/);

    // Asked for the source, the installed bin has none to run, and no tsx to run it with.
    const source = await run(join(app, 'node_modules/.bin/ratchet'), ['--help'], {
      cwd: app,
      env: childEnv({ RATCHET_SOURCE: '1' }),
    });
    expect(source.code).toBe(1);
    expect(source.stderr).toContain(
      "cannot run from source (RATCHET_SOURCE=1 or src/ newer than dist/): Cannot find package 'tsx'",
    );
  }, 120_000);

  it('its ratchet bin runs a task end to end from the package: config, Lua scripts, API and worker are found', async () => {
    world = createWorld({
      script: {
        replies: [
          { text: 'Adding.', tool_calls: [{ name: 'calculate', arguments: { expression: '2 + 3' } }] },
          { text: 'It is 5.' },
        ],
      },
      redisUrl: inject('redisUrl'),
    });
    const result = await run(
      join(app, 'node_modules/.bin/ratchet'),
      ['run', '--config', world.configPath, 'What is 2 + 3?'],
      { cwd: world.dir, env: childEnv({ RATCHET_LOG_LEVEL: 'warn' }) },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ calculate → {"expression":"2 + 3","result":5}');
    expect(result.stdout.endsWith('\nanswer: It is 5.\n')).toBe(true);
  }, 120_000);
});

/**
 * Runs one line of docs/client.md's setup in `cwd` as a user would, with two changes: `ratchet` is installed
 * from the packed tarball, and TypeScript is the version the repository uses.
 */
async function runSetupLine(line: string, cwd: string): Promise<void> {
  const words = line
    .replace(/\s+#.*$/, '')
    .trim()
    .split(/\s+/);
  let output: Output;
  if (words[0] === 'npm') {
    const args = words.slice(1).map((word) => {
      if (words[1] !== 'install') return word;
      if (word === 'ratchet') return tarball;
      return word === 'typescript' ? `typescript@${typescriptVersion}` : word;
    });
    if (words[1] === 'install')
      args.push('--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier');
    output = await npm(args, cwd);
  } else if (words[0] === 'npx' && words[1] === 'tsc') {
    output = await run(process.execPath, [join(cwd, 'node_modules/typescript/bin/tsc'), ...words.slice(2)], {
      cwd,
    });
  } else {
    throw new Error(`docs/client.md's setup has a line this test cannot run: ${line}`);
  }
  if (output.code !== 0) throw failed(line, output);
}

describe("docs/client.md's example in a new project", () => {
  it('compiles after the setup the docs give (npm init -y, then the package as an ES module with Node types), and runs', async () => {
    const project = join(work, 'fresh');
    mkdirSync(project);
    const setup = docBlock('docs/client.md', '## Installing', 'sh')
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(setup[0]).toBe('npm init -y');
    for (const line of setup) await runSetupLine(line, project);

    writeFileSync(join(project, 'main.ts'), docBlock('docs/client.md', '## Example', 'ts'));
    const tsc = join(project, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc], { cwd: project });
    if (compiled.code !== 0) throw failed('tsc', compiled);

    api = await ApiHarness.start({ script });
    const result = await run(process.execPath, ['main.js'], {
      cwd: project,
      env: childEnv({ RATCHET_URL: api.url }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith('completed Lisbon, next weekend: booked.\n')).toBe(true);

    // Each setup line is needed: without Node's types, `process` is unknown; as CommonJS (what npm init -y
    // makes), the top-level await is refused.
    writeFileSync(
      join(project, 'tsconfig.no-node.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { types: [], noEmit: true } }),
    );
    const withoutTypes = await run(process.execPath, [tsc, '-p', 'tsconfig.no-node.json'], { cwd: project });
    expect(withoutTypes.code).not.toBe(0);
    // TS2580, or TS2591 where a tsconfig lists the types ("add 'node' to the types field").
    expect(withoutTypes.stdout).toMatch(/error TS25(80|91): Cannot find name 'process'/);
    await runSetupLine('npm pkg set type=commonjs', project);
    const asCommonJs = await run(process.execPath, [tsc, '--noEmit'], { cwd: project });
    expect(asCommonJs.code).not.toBe(0);
    expect(asCommonJs.stdout).toContain('error TS1309');
    await runSetupLine('npm pkg set type=module', project);
  }, 300_000);

  it("every example compiles there, copied with the package's names in its imports", async () => {
    const project = join(work, 'fresh');
    const tsc = join(project, 'node_modules/typescript/bin/tsc');
    if (!existsSync(tsc)) throw new Error('the project of the previous test was not set up');
    for (const file of exampleFiles()) {
      mkdirSync(dirname(join(project, 'examples', file)), { recursive: true });
      writeFileSync(join(project, 'examples', file), withPackageNames(file));
    }
    // A project's usual settings (not the ones of tsc --init, which are stricter than the examples are written).
    writeFileSync(
      join(project, 'tsconfig.examples.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          types: ['node'],
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['examples'],
      }),
    );
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.examples.json'], { cwd: project });
    if (compiled.code !== 0) throw failed('tsc of the examples', compiled);
    expect(readFileSync(join(project, 'examples/engine-from-code.ts'), 'utf8')).toContain(
      "} from 'ratchet';",
    );
  }, 120_000);
});
