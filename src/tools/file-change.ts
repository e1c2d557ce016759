import { redactSecrets } from '../secrets/index.js';

/**
 * A file of the workspace that a tool call created, changed or deleted. Reported by the handler through
 * ToolContext.recordFileChange and committed as `file_change` events with the call's outcome (once: the
 * outcome's commit happens once per call).
 */
export interface FileChange {
  /** Relative to the workspace root, `/`-separated. */
  path: string;
  change: 'created' | 'modified' | 'deleted';
  /** Bytes after the change (null once deleted). */
  size: number | null;
  /** Bytes before the change (null when it was created). */
  sizeBefore: number | null;
  /** Lines added and removed, when the tool knew both texts (filesystem tools; not exec). */
  lines?: { added: number; removed: number };
}

/** The most file_change events one tool call emits; further changes are counted on the last one. */
export const maxFileChangesPerCall = 100;

/** The changes a call reported, at most maxFileChangesPerCall of them, and how many more there were. */
export interface FileChanges {
  changes: FileChange[];
  more: number;
}

/**
 * Collects what a handler reports, keeping the first maxFileChangesPerCall changes. A path is the model's
 * choice and may spell a secret: it is redacted as the call's result is.
 */
export function fileChangeCollector(): { record(change: FileChange): void; collected(): FileChanges } {
  const changes: FileChange[] = [];
  let more = 0;
  return {
    record(change) {
      if (changes.length < maxFileChangesPerCall)
        changes.push({ ...change, path: redactSecrets(change.path) });
      else more += 1;
    },
    collected: () => ({ changes, more }),
  };
}

/**
 * Lines added and removed between two texts, counted as multisets of lines (a moved line counts as neither):
 * a diff stat in linear time, without the alignment a full diff would compute.
 */
export function lineStat(before: string, after: string): { added: number; removed: number } {
  const remaining = new Map<string, number>();
  for (const line of linesOf(before)) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  let added = 0;
  for (const line of linesOf(after)) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) remaining.set(line, count - 1);
    else added += 1;
  }
  let removed = 0;
  for (const count of remaining.values()) removed += count;
  return { added, removed };
}

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
