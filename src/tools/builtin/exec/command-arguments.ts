import { lstat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { resolveInWorkspace } from '../workspace/workspace-path.js';

/**
 * Refuses a command's arguments that name something outside the workspace, with an error naming `args[i]`.
 * An argument is taken for a path when it is absolute, has a `..` segment, starts with `~`, or names an
 * existing entry of the directory the command runs in (so a symbolic link there leading outside is caught);
 * for an option written `--name=value` the value is checked. Other arguments (`-n`, a pattern, a word) pass.
 *
 * This gives the model a clear refusal; it cannot see every path a program will open (a program may read a
 * path out of a file, or build one), so the sandbox stays what confines the command.
 */
export async function confineArguments(
  workspace: string,
  cwdRelative: string,
  args: readonly string[],
): Promise<void> {
  for (const [index, argument] of args.entries()) {
    const field = `args[${index}]`;
    const candidate = pathPart(argument);
    if (candidate === undefined) continue;
    if (candidate.startsWith('~')) {
      throw new Error(
        `${field}: "${argument}" names a home directory, outside the workspace; use a path relative to the workspace root`,
      );
    }
    const inWorkspace = isAbsolute(candidate) ? candidate : join(cwdRelative, candidate);
    if (looksLikePath(candidate) || (await exists(join(workspace, inWorkspace)))) {
      await resolveInWorkspace(workspace, inWorkspace, field);
    }
  }
}

/** The part of an argument that may be a path: the value of `--name=value`, or the argument itself. */
function pathPart(argument: string): string | undefined {
  if (argument === '') return undefined;
  const option = /^--?[^=]+=(.*)$/s.exec(argument);
  if (option) return option[1] === '' ? undefined : option[1];
  return argument;
}

function looksLikePath(candidate: string): boolean {
  return isAbsolute(candidate) || candidate.split('/').includes('..');
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
