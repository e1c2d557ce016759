import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  exampleFiles,
  foreignImports,
  packageEntries,
  withPackageNames,
} from '../helpers/package-examples.js';

// The examples are what users copy into their projects, where only the package's exports exist: each imports
// Node's built-ins, zod, another example, or one of the package's entry points (as their sources), nothing
// else. (test/package/packed-tarball.int.test.ts compiles them against the installed package.)

const repoRoot = resolve(import.meta.dirname, '../..');

describe('the examples', () => {
  it("import only Node's built-ins, zod, each other, and the package's entry points", () => {
    const files = exampleFiles();
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(files.flatMap((file) => foreignImports(file).map((specifier) => `${file}: ${specifier}`))).toEqual(
      [],
    );
  });

  it("read with the package's names, as a user copies them", () => {
    expect(withPackageNames('engine-from-code.ts')).toContain("} from 'ratchet';");
    expect(withPackageNames('kinds/local-worker.ts')).toContain("} from 'ratchet';");
    expect(withPackageNames('client.ts')).toContain("import { RatchetClient } from 'ratchet/client';");
    expect(withPackageNames('crash-test-my-tool.ts')).toContain("from 'ratchet/testing';");
    expect(withPackageNames('cheap-router-middleware.ts')).toContain("from './kinds/cheap-router.js';");
    for (const file of exampleFiles()) expect(withPackageNames(file)).not.toMatch(/from '(\.\.\/)+src\//);
  });

  it('the package exports those entry points', () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string }>;
    };
    for (const [source, name] of Object.entries(packageEntries)) {
      const subpath = name === 'ratchet' ? '.' : `./${name.slice('ratchet/'.length)}`;
      const compiled = `./${source.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js')}`;
      expect(manifest.exports[subpath]?.default).toBe(compiled);
    }
  });
});
