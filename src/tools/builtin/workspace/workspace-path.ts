import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A path the model named, resolved inside the workspace with every symbolic link followed. */
export interface WorkspacePath {
  /** The real absolute path (symbolic links resolved; missing trailing parts appended as named). */
  absolute: string;
  /** Relative to the workspace root, "." for the root itself: what tools show the model. */
  relative: string;
  exists: boolean;
}

/** The workspace's real path; the directory is created on first use. */
export async function workspaceRoot(root: string): Promise<string> {
  await mkdir(root, { recursive: true });
  return realpath(root);
}

/**
 * Resolves `userPath` (relative to the workspace, or absolute) and refuses anything outside the workspace:
 * `..` escapes, absolute paths elsewhere, and symbolic links whose target is outside, checked on the real
 * path. A path that does not exist yet is checked through its nearest existing ancestor; a dangling
 * symbolic link is refused, since writing through it would create its target wherever it points.
 * `field` names the input field in error messages.
 */
export async function resolveInWorkspace(
  root: string,
  userPath: string,
  field = 'path',
): Promise<WorkspacePath> {
  if (userPath.includes('\0')) throw new Error(`${field}: contains a NUL character`);
  const realRoot = await workspaceRoot(root);
  const configuredRoot = resolve(root);
  const candidate = isAbsolute(userPath) ? resolve(userPath) : resolve(realRoot, userPath);
  const inside = relativeInside(realRoot, candidate) ?? relativeInside(configuredRoot, candidate);
  if (inside === undefined) {
    throw new Error(
      `${field}: "${userPath}" is outside the workspace; use a path relative to the workspace root`,
    );
  }
  let existing = join(realRoot, inside);
  const missing: string[] = [];
  let realExisting: string | undefined;
  while (realExisting === undefined) {
    try {
      realExisting = await realpath(existing);
    } catch (error) {
      if (!isMissing(error)) throw error;
      if (await isSymbolicLink(existing)) {
        throw new Error(`${field}: "${userPath}" goes through a symbolic link whose target does not exist`);
      }
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  const real = join(realExisting, ...missing);
  const realRelative = relativeInside(realRoot, real);
  if (realRelative === undefined) {
    throw new Error(`${field}: "${userPath}" leads outside the workspace through a symbolic link`);
  }
  return { absolute: real, relative: realRelative === '' ? '.' : realRelative, exists: missing.length === 0 };
}

/**
 * Opens a file resolved by resolveInWorkspace and checks, on the open handle, that what was opened is still
 * inside the workspace. This closes the window between the path check and the use: a symbolic link swapped
 * in meanwhile as the file itself is refused by O_NOFOLLOW, and one swapped in as a directory on the way is
 * caught by the opened file's real path (/proc/self/fd on Linux; elsewhere the path is resolved again).
 */
export async function openInWorkspace(root: string, file: WorkspacePath, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file.absolute, flags | constants.O_NOFOLLOW, 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new Error(
        `path: "${file.relative}" became a symbolic link while it was being opened; it is refused`,
      );
    }
    throw error;
  }
  try {
    const realRoot = await workspaceRoot(root);
    const opened = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => realpath(file.absolute));
    if (relativeInside(realRoot, opened) === undefined) {
      throw new Error(`path: "${file.relative}" leads outside the workspace through a symbolic link`);
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** `target` relative to `base` when it is `base` or below it ("" for `base` itself); undefined otherwise. */
export function relativeInside(base: string, target: string): string | undefined {
  const path = relative(base, target);
  if (path === '') return '';
  if (path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) return undefined;
  return path;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function isSymbolicLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
