import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The test worker (test/fixtures/test-worker.ts) and the sources it imports as one ES module, built from the
 * checkout at the start of every test run. The crash suites start a worker process per crash point, often
 * two; under tsx each start transpiles and resolves some 400 modules (about 2 s on a quiet 2-core machine),
 * from one file it is about 1 s. Packages stay imports of node_modules, so the file is written inside it,
 * where Node finds them; source maps are inline, so stack traces name the TypeScript files.
 *
 * `import.meta.url`, `dirname` and `filename` are each module's own, written in as text: a bundle would
 * otherwise give every module the bundle's location (the Lua scripts are read relative to theirs).
 */
export async function buildWorkerBundle(): Promise<string> {
  // One file per checkout: worktrees may share one node_modules (a link), and runs of each must not mix.
  const checkout = createHash('sha256').update(repoRoot).digest('hex').slice(0, 12);
  const outfile = join(repoRoot, 'node_modules', '.cache', `ratchet-test-${checkout}`, 'test-worker.mjs');
  await build({
    entryPoints: [join(repoRoot, 'test/fixtures/test-worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
    plugins: [
      {
        name: 'import-meta-of-each-module',
        setup(builder) {
          builder.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
            const text = await readFile(path, 'utf8');
            const contents = text.includes('import.meta')
              ? text
                  .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
                  .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
                  .replaceAll('import.meta.filename', JSON.stringify(path))
              : text;
            return { contents, loader: 'ts' };
          });
        },
      },
    ],
  });
  return outfile;
}
