// `npm install` / `npm ci` in a checkout, and `npm pack` / `npm publish`, run this (the `prepare` script):
// build dist/ so that `ratchet` runs compiled JavaScript instead of compiling TypeScript at every start, and
// so that the tarball carries it (package.json's `files` packs dist/, never src/). Where there is nothing to
// build yet (the Docker image runs `npm ci` before it copies scripts/ and src/: package.json's prepare then
// skips this file) or no compiler (`--omit=dev`), an install says so and leaves `ratchet` in source mode; a
// pack or publish fails instead, since its tarball would have no dist/. A build that fails fails either.
// (npm does not run `prepare` when it installs a tarball or a registry package: those ship dist/ built.)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const packing = process.env.npm_command === 'pack' || process.env.npm_command === 'publish';
const cannot =
  !existsSync(join(root, 'src/cli/main.ts')) || !existsSync(join(root, 'tsconfig.build.json'))
    ? 'no src/ to build yet'
    : !existsSync(join(root, 'node_modules/typescript'))
      ? 'typescript is not installed (--omit=dev?)'
      : undefined;
if (cannot !== undefined && packing) {
  console.error(`ratchet prepare: cannot build dist/ for the package: ${cannot}; run npm install first`);
  process.exit(1);
} else if (cannot !== undefined) {
  console.log(`ratchet prepare: ${cannot}; skipped, ratchet runs from source`);
} else {
  const started = Date.now();
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  console.log(`ratchet prepare: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
