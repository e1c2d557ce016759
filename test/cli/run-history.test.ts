import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/cli-error.js';
import {
  findInHistory,
  readRunHistory,
  rememberRun,
  runHistoryLimit,
  runHistoryPath,
} from '../../src/cli/run-history.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function historyIn(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-history-'));
  dirs.push(dir);
  return runHistoryPath(dir);
}

const entry = (index: number) => ({
  run_id: `run_${index}`,
  session_id: `ses_${index}`,
  url: index % 2 === 0 ? 'http://127.0.0.1:8080' : null,
  agent: null,
  task: `task ${index}`,
  started_at: new Date(1_700_000_000_000 + index).toISOString(),
});

describe('the run history (.ratchet/runs.jsonl)', () => {
  it('remembers runs in order, with their API, and finds the latest line of a run', () => {
    const path = historyIn();
    expect(readRunHistory(path)).toEqual([]);
    rememberRun(path, entry(1));
    rememberRun(path, entry(2));
    rememberRun(path, { ...entry(1), url: 'http://other:1' });
    expect(readRunHistory(path).map((line) => line.run_id)).toEqual(['run_1', 'run_2', 'run_1']);
    expect(findInHistory(path, 'run_1')?.url).toBe('http://other:1');
    expect(findInHistory(path, 'run_9')).toBeUndefined();
    expect(path.endsWith(join('.ratchet', 'runs.jsonl'))).toBe(true);
  });

  it('cuts a long task, and keeps the newest runs when the file grows past twice the limit', () => {
    const path = historyIn();
    rememberRun(path, { ...entry(0), task: 'x'.repeat(1000) });
    expect(readRunHistory(path)[0]?.task).toHaveLength(200);
    for (let index = 1; index <= runHistoryLimit * 2 + 5; index++) rememberRun(path, entry(index));
    const kept = readRunHistory(path);
    expect(kept.length).toBeLessThanOrEqual(runHistoryLimit * 2);
    expect(kept.length).toBeGreaterThanOrEqual(runHistoryLimit);
    expect(kept.at(-1)?.run_id).toBe(`run_${runHistoryLimit * 2 + 5}`);
    expect(kept.some((line) => line.run_id === 'run_0')).toBe(false);
  });

  it('refuses a line that does not parse, naming the file and the line', () => {
    const path = historyIn();
    rememberRun(path, entry(1));
    appendFileSync(path, '{"v":1,"run_id":"run_2"}\nnot json\n');
    expect(() => readRunHistory(path)).toThrow(CliError);
    expect(() => readRunHistory(path)).toThrow(`the run history ${path} has a bad line 2`);
    expect(readFileSync(path, 'utf8')).toContain('not json');
  });
});
