import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// examples/ as users copy it: files whose imports of the package's entry points (as their sources) become
// the package's names.

const repoRoot = resolve(import.meta.dirname, '../..');
export const examplesRoot = join(repoRoot, 'examples');

/** The package's entry points as files of the repository, with their names (package.json's `exports`). */
export const packageEntries: Readonly<Record<string, string>> = {
  'src/index.ts': 'ratchet',
  'src/client/index.ts': 'ratchet/client',
  'src/testing/index.ts': 'ratchet/testing',
};

const importPattern = /^((?:import|export)\s[^'"]*?from\s+')([^']+)'/gm;

/** Every example's TypeScript file, as a path under examples/ (kinds/… included). */
export function exampleFiles(): string[] {
  return readdirSync(examplesRoot, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .sort();
}

/** What `specifier`, imported by examples/`file`, names: its file in the repository for a relative one. */
function targetOf(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return relative(repoRoot, resolve(dirname(join(examplesRoot, file)), specifier.replace(/\.js$/, '.ts')));
}

/** The imports of examples/`file` a user of the package could not write (neither Node's, zod, nor ours). */
export function foreignImports(file: string): string[] {
  const text = readFileSync(join(examplesRoot, file), 'utf8');
  return [...text.matchAll(importPattern)]
    .map(([, , specifier]) => specifier ?? '')
    .filter((specifier) => {
      if (specifier.startsWith('node:') || specifier === 'zod') return false;
      const target = targetOf(file, specifier);
      return !(target.startsWith('examples/') || target in packageEntries);
    });
}

/** examples/`file` with its imports of the package's entry points under the package's names. */
export function withPackageNames(file: string): string {
  const text = readFileSync(join(examplesRoot, file), 'utf8');
  return text.replace(importPattern, (match, head: string, specifier: string) => {
    const name = packageEntries[targetOf(file, specifier)];
    return name === undefined ? match : `${head}${name}'`;
  });
}
