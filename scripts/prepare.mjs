// `npm install` / `npm ci` run this (the `prepare` script): build dist/ so that `ratchet` runs compiled
// JavaScript instead of compiling TypeScript at every start. Where there is nothing to build yet (the Docker
// image runs `npm ci` before it copies scripts/ and src/: package.json's prepare then skips this file) or no
// compiler (`--omit=dev`), it says so and leaves `ratchet` in source mode. A build that fails fails the install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
if (!existsSync(join(root, 'src/cli/main.ts')) || !existsSync(join(root, 'tsconfig.build.json'))) {
  console.log('ratchet prepare: no src/ to build yet; skipped');
} else if (!existsSync(join(root, 'node_modules/typescript'))) {
  console.log('ratchet prepare: typescript is not installed (--omit=dev?); ratchet runs from source');
} else {
  const started = Date.now();
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  console.log(`ratchet prepare: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
