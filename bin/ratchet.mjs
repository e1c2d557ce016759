#!/usr/bin/env node
// `ratchet`: runs the compiled CLI (dist/cli/main.js) when it is there and up to date; otherwise the TypeScript
// source through tsx's loader, registered here so it resolves from this package whatever the working directory
// is. Compiling at every start costs seconds (`--help` takes about 0.3 s compiled against 1.8 s from source),
// which slows every worker that starts.
//
// The published package carries dist/ (built by `npm pack`) and no src/: it always runs dist/, and tsx is not
// even installed with it (a dev dependency). In a checkout, `npm install` builds dist/ (the prepare script).
//
// Source mode: RATCHET_SOURCE=1, or no dist/, or a file under src/ changed after the build (a checkout being
// edited: a stale build would run yesterday's code). RATCHET_SOURCE=0 runs dist/ even when it looks stale.
//
// First of all, an unsupported Node.js is refused with one line: what follows (tsx, the CLI, its dependencies)
// would fail on it without saying why. This is src/worker/node-version.ts again, in JavaScript that any Node
// parses, since it must run before TypeScript can be loaded; test/cli/node-version.int.test.ts checks that
// both print the same line.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

refuseUnsupportedNode();

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist/cli/main.js');

if (useSource()) {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const why = existsSync(compiled) ? 'RATCHET_SOURCE=1 or src/ newer than dist/' : 'no dist/cli/main.js';
    process.stderr.write(
      `ratchet: cannot run from source (${why}): Cannot find package 'tsx' (a dev dependency). ` +
        'Run npm install (which builds dist/), or npm run build.\n',
    );
    process.exit(1);
  }
  register();
  await import('../src/cli/main.ts');
} else {
  await import(pathToFileURL(compiled).href);
}

function useSource() {
  const asked = process.env.RATCHET_SOURCE;
  if (asked === '1' || asked === 'true') return true;
  if (!existsSync(compiled)) return true;
  if (asked === '0' || asked === 'false') return false;
  const builtAt = statSync(compiled).mtimeMs;
  return changedSince(join(root, 'src'), builtAt);
}

/** Whether a file under `dir` (an installed package has no src/) was modified after `time`. */
function changedSince(dir, time) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() ? changedSince(path, time) : statSync(path).mtimeMs > time) return true;
  }
  return false;
}

/** Ends the process with one line on stderr (exit 1) unless this is Node.js 22.18 or later in 22, or 24 and later. */
function refuseUnsupportedNode() {
  const version = process.versions.node;
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  if (major >= 24 || (major === 22 && minor >= 18)) return;
  process.stderr.write(
    `ratchet: Node.js ${version} is not supported: Ratchet runs on Node.js 22 (22.18 or later) or 24 and later, ` +
      'the maintained LTS lines. Install one with your version manager (e.g. `nvm install 24`) or from ' +
      'https://nodejs.org/en/download\n',
  );
  process.exit(1);
}
