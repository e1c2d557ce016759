import { realpathSync, statSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';

/** How a user runs the CLI from their shell: the words the commands it suggests start with. */
export type Invocation = 'ratchet' | 'npx ratchet';

/**
 * `ratchet` when a `ratchet` on the user's PATH is this very program (a global install, `npm link`), else
 * `npx ratchet`: in a checkout, or a project that has the package as a dependency, `ratchet` is not on the
 * PATH, and npx finds the local one. npm and npx put `node_modules/.bin` directories on the PATH of what they
 * start; those are not the shell's, so they do not count. Another program named `ratchet` does not count
 * either.
 */
export function invocationOf(options: { path: string | undefined; bin: string }): Invocation {
  const bin = realPath(options.bin);
  if (bin === undefined) return 'npx ratchet';
  const onPath = (options.path ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !dir.replace(/[\\/]+$/, '').endsWith(`node_modules${sep}.bin`))
    .map((dir) => join(dir, 'ratchet'));
  return onPath.some((candidate) => isExecutable(candidate) && realPath(candidate) === bin)
    ? 'ratchet'
    : 'npx ratchet';
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  try {
    const stats = statSync(path);
    // Any execute bit: the shell runs it.
    return stats.isFile() && (stats.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}
