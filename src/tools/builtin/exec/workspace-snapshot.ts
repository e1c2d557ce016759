import { stat } from 'node:fs/promises';
import type { FileChange } from '../../file-change.js';
import { walkWorkspace } from '../workspace/walk-workspace.js';

/** What is compared of a file: a write changes its ctime (in nanoseconds) even when size and mtime stay. */
interface FileState {
  size: number;
  changed: string;
}

/** The workspace's files at one moment; `complete` is false when the file cap stopped the walk. */
export interface WorkspaceSnapshot {
  files: Map<string, FileState>;
  complete: boolean;
}

/**
 * The most files a snapshot looks at. A command's changes are found by comparing two snapshots, each a walk
 * of the workspace: past this many files the walk stops, and the command's changes are not reported.
 */
export const maxSnapshotFiles = 10_000;

/** Every file below the workspace root (`.git` skipped), with its size and change time, up to `maxFiles`. */
export async function snapshotWorkspace(
  realRoot: string,
  signal: AbortSignal,
  maxFiles = maxSnapshotFiles,
): Promise<WorkspaceSnapshot> {
  const files = new Map<string, FileState>();
  const summary = await walkWorkspace({ realRoot, start: realRoot, signal, maxFiles }, async (file) => {
    const info = await stat(file.absolute, { bigint: true }).catch(() => undefined);
    if (info?.isFile()) files.set(file.relative, { size: Number(info.size), changed: `${info.ctimeNs}` });
    return true;
  });
  return { files, complete: !summary.stopped };
}

/**
 * The files created, modified or deleted between two snapshots, in path order; none when either snapshot is
 * incomplete (a file past the cap in one walk would look created or deleted).
 */
export function changesBetween(before: WorkspaceSnapshot, after: WorkspaceSnapshot): FileChange[] {
  if (!before.complete || !after.complete) return [];
  const changes: FileChange[] = [];
  for (const [path, now] of after.files) {
    const then = before.files.get(path);
    if (!then) changes.push({ path, change: 'created', size: now.size, sizeBefore: null });
    else if (then.changed !== now.changed || then.size !== now.size)
      changes.push({ path, change: 'modified', size: now.size, sizeBefore: then.size });
  }
  for (const [path, then] of before.files) {
    if (!after.files.has(path)) changes.push({ path, change: 'deleted', size: null, sizeBefore: then.size });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
