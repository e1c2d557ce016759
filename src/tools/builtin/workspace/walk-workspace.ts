import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { relativeInside } from './workspace-path.js';

export interface WalkedFile {
  /** Relative to the workspace root, `/`-separated. */
  relative: string;
  absolute: string;
}

export interface WalkOptions {
  /** The workspace's real path. */
  realRoot: string;
  /** The real path to start from (a directory below or at the root). */
  start: string;
  signal: AbortSignal;
  /** Stop after looking at this many files. */
  maxFiles: number;
}

export interface WalkSummary {
  filesSeen: number;
  /** The walk ended early: the file cap was reached or the visitor asked to stop. */
  stopped: boolean;
}

/**
 * The longest the walk keeps the event loop to itself: a directory of many files, each matched against a
 * pattern, would otherwise run as one long synchronous stretch, and a worker whose loop is blocked misses
 * its lock renewals (the step is taken over and runs twice).
 */
const maxBusyMs = 20;

/**
 * Visits the files below `start`, depth first in name order (a directory's files before its
 * subdirectories). Symbolic links are followed only when their target is inside the workspace (each
 * directory once, so link cycles end); `.git` directories are skipped. The visitor returns false to stop.
 * The walk yields to the event loop at least every `maxBusyMs`.
 */
export async function walkWorkspace(
  options: WalkOptions,
  visit: (file: WalkedFile) => Promise<boolean> | boolean,
): Promise<WalkSummary> {
  const visited = new Set<string>([options.start]);
  const pending: string[] = [options.start];
  let filesSeen = 0;
  let busySince = performance.now();
  const yieldWhenBusy = async () => {
    if (performance.now() - busySince < maxBusyMs) return;
    await nextTurn();
    options.signal.throwIfAborted();
    busySince = performance.now();
  };
  while (pending.length > 0) {
    options.signal.throwIfAborted();
    const directory = pending.pop() as string;
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    const subdirectories: string[] = [];
    for (const entry of entries) {
      await yieldWhenBusy();
      const path = join(directory, entry.name);
      let real = path;
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await realpath(path).catch(() => undefined);
        if (target === undefined || relativeInside(options.realRoot, target) === undefined) continue;
        const info = await stat(target).catch(() => undefined);
        if (info === undefined) continue;
        real = target;
        isDirectory = info.isDirectory();
        isFile = info.isFile();
      }
      if (isDirectory) {
        if (entry.name !== '.git' && !visited.has(real)) {
          visited.add(real);
          subdirectories.push(real);
        }
        continue;
      }
      if (!isFile) continue;
      if (filesSeen >= options.maxFiles) return { filesSeen, stopped: true };
      filesSeen += 1;
      const relative = (relativeInside(options.realRoot, path) ?? path).split('\\').join('/');
      if (!(await visit({ relative, absolute: real }))) return { filesSeen, stopped: true };
    }
    // The first subdirectory is popped next: a directory's files, then its subdirectories, in name order.
    pending.push(...subdirectories.reverse());
  }
  return { filesSeen, stopped: false };
}
