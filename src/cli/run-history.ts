import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { CliError } from './cli-error.js';

/**
 * The runs `ratchet run` started from a directory, one JSON line each in `.ratchet/runs.jsonl` (next to the
 * dev Redis data): where `status`, `attach`, `cancel` and `answer` find the API a run was started on, and
 * `runs` the API this directory used last (a run id does not say which API it lives on). The runs
 * themselves are listed by the API (decision 0016's update). Holds no token.
 */
export const runHistoryEntrySchema = z.strictObject({
  v: z.literal(1),
  run_id: z.string().min(1),
  session_id: z.string().min(1),
  /** The API the run was submitted to; null: one the CLI started in its own process (gone with it). */
  url: z.string().nullable(),
  agent: z.string().nullable(),
  /** The task, cut to its first 200 characters. */
  task: z.string(),
  started_at: z.iso.datetime(),
});
export type RunHistoryEntry = z.infer<typeof runHistoryEntrySchema>;

/** The history keeps the latest this many runs (older lines are dropped when it grows past twice that). */
export const runHistoryLimit = 200;

export function runHistoryPath(cwd: string = process.cwd()): string {
  return resolve(cwd, '.ratchet/runs.jsonl');
}

/** Adds a run to the history; throws the file system's error (the caller says so and carries on with the run). */
export function rememberRun(path: string, entry: Omit<RunHistoryEntry, 'v'>): void {
  const record: RunHistoryEntry = runHistoryEntrySchema.parse({
    v: 1,
    ...entry,
    task: entry.task.length > 200 ? `${entry.task.slice(0, 199)}…` : entry.task,
  });
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
  // Lines are counted only once the file could hold too many: every line is longer than 100 bytes.
  if (statSync(path).size > runHistoryLimit * 2 * 100) {
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    if (lines.length > runHistoryLimit * 2) {
      writeFileSync(path, `${lines.slice(-runHistoryLimit).join('\n')}\n`);
    }
  }
}

/** The runs in the history, oldest first; none when there is no file. A line that does not parse is an error. */
export function readRunHistory(path: string): RunHistoryEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CliError(`cannot read the run history ${path}: ${(error as Error).message}`);
  }
  return text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, number }) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        value = undefined;
      }
      const parsed = runHistoryEntrySchema.safeParse(value);
      if (!parsed.success) {
        throw new CliError(
          `the run history ${path} has a bad line ${number} (${value === undefined ? 'not JSON' : parsed.error.issues[0]?.message}): ` +
            'fix or delete that line (the file only lists the runs started here)',
        );
      }
      return parsed.data;
    });
}

/** The latest history entry of this run, if this directory started it. */
export function findInHistory(path: string, runId: string): RunHistoryEntry | undefined {
  return readRunHistory(path).findLast((entry) => entry.run_id === runId);
}
