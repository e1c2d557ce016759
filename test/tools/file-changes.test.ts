import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEvent } from '../../src/cli/render-event.js';
import { buildEvent, type RatchetEvent } from '../../src/events/event.js';
import { execToolbox } from '../../src/tools/builtin/exec/exec-toolbox.js';
import { changesBetween, snapshotWorkspace } from '../../src/tools/builtin/exec/workspace-snapshot.js';
import { filesystemToolbox } from '../../src/tools/builtin/filesystem/filesystem-toolbox.js';
import {
  type FileChange,
  fileChangeCollector,
  lineStat,
  maxFileChangesPerCall,
} from '../../src/tools/index.js';
import { callOk, toolContext, toolsSettings, useTemporaryDirectory } from '../helpers/tool-calls.js';

const directory = useTemporaryDirectory('file-changes');

/** A tool context that keeps the file changes its handler reports. */
function recording(): { changes: FileChange[]; context: ReturnType<typeof toolContext> } {
  const changes: FileChange[] = [];
  return { changes, context: toolContext({ recordFileChange: (change) => changes.push(change) }) };
}

describe('lineStat', () => {
  it('counts lines added and removed as multisets', () => {
    expect(lineStat('', 'a\nb\n')).toEqual({ added: 2, removed: 0 });
    expect(lineStat('a\nb\nc\n', 'a\nc\nd\ne')).toEqual({ added: 2, removed: 1 });
    expect(lineStat('a\nb\n', 'b\na\n')).toEqual({ added: 0, removed: 0 });
    expect(lineStat('x\n', '')).toEqual({ added: 0, removed: 1 });
  });
});

describe('the filesystem toolbox reports the files it changes', () => {
  it('write_file reports created, then modified with the diff stat; edit_file reports modified', async () => {
    const toolbox = filesystemToolbox({ workspace: directory.path, settings: toolsSettings().filesystem });
    const first = recording();
    await callOk(toolbox, 'write_file', { path: 'docs/plan.md', content: 'one\ntwo\n' }, first.context);
    expect(first.changes).toEqual([
      { path: 'docs/plan.md', change: 'created', size: 8, sizeBefore: null, lines: { added: 2, removed: 0 } },
    ]);
    const second = recording();
    await callOk(
      toolbox,
      'write_file',
      { path: 'docs/plan.md', content: 'one\nthree\nfour\n' },
      second.context,
    );
    expect(second.changes).toEqual([
      { path: 'docs/plan.md', change: 'modified', size: 15, sizeBefore: 8, lines: { added: 2, removed: 1 } },
    ]);
    const edit = recording();
    await callOk(
      toolbox,
      'edit_file',
      { path: 'docs/plan.md', old_string: 'four\n', new_string: '' },
      edit.context,
    );
    expect(edit.changes).toEqual([
      { path: 'docs/plan.md', change: 'modified', size: 10, sizeBefore: 15, lines: { added: 0, removed: 1 } },
    ]);
    // Reading changes nothing, and reports nothing.
    const read = recording();
    await callOk(toolbox, 'read_file', { path: 'docs/plan.md' }, read.context);
    expect(read.changes).toEqual([]);
  });
});

describe('exec reports what a command changed, from snapshots of the workspace', () => {
  it('a created, a modified and a deleted file, in path order; an unchanged one is not reported', async () => {
    writeFileSync(join(directory.path, 'keep.txt'), 'same');
    writeFileSync(join(directory.path, 'change.txt'), 'before');
    writeFileSync(join(directory.path, 'gone.txt'), 'bye');
    const settings = toolsSettings({ exec: { enabled: true, commands: ['node'], sandbox: 'none' } }).exec;
    const toolbox = execToolbox({ workspace: directory.path, settings });
    const script =
      "const fs=require('fs');fs.writeFileSync('change.txt','after!');fs.rmSync('gone.txt');" +
      "fs.mkdirSync('out');fs.writeFileSync('out/new.txt','12345')";
    const { changes, context } = recording();
    await callOk(toolbox, 'run_command', { command: 'node', args: ['-e', script] }, context);
    expect(changes).toEqual([
      { path: 'change.txt', change: 'modified', size: 6, sizeBefore: 6 },
      { path: 'gone.txt', change: 'deleted', size: null, sizeBefore: 3 },
      { path: 'out/new.txt', change: 'created', size: 5, sizeBefore: null },
    ]);
  });

  it('a snapshot over its file cap reports nothing rather than made-up changes; .git and outside links are skipped', async () => {
    mkdirSync(join(directory.path, '.git'));
    writeFileSync(join(directory.path, '.git', 'index'), 'x');
    symlinkSync('/etc', join(directory.path, 'etc-link'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(directory.path, name), name);
    const signal = new AbortController().signal;
    const whole = await snapshotWorkspace(directory.path, signal);
    expect([...whole.files.keys()]).toEqual(['a', 'b', 'c']);
    const capped = await snapshotWorkspace(directory.path, signal, 2);
    expect(capped.complete).toBe(false);
    expect(changesBetween(capped, { files: new Map(), complete: true })).toEqual([]);
  });
});

describe('file changes of one call', () => {
  it('are bounded: past the cap they are counted, not kept', () => {
    const collector = fileChangeCollector();
    for (let index = 0; index < maxFileChangesPerCall + 3; index += 1)
      collector.record({ path: `f${index}`, change: 'created', size: 1, sizeBefore: null });
    const { changes, more } = collector.collected();
    expect(changes).toHaveLength(maxFileChangesPerCall);
    expect(more).toBe(3);
  });

  it('are one terminal line each, with the diff stat', () => {
    const event = (data: Record<string, unknown>) =>
      ({
        ...buildEvent(
          'file_change',
          { id: 'run_1', agent: 'coder' },
          {
            iteration: 1,
            tool_call_id: 'c1',
            name: 'write_file',
            path: 'src/a.ts',
            change: 'modified',
            size: 120,
            size_before: 100,
            ...data,
          },
          '2026-01-01T00:00:00.000Z',
        ),
        id: '1-0',
      }) as RatchetEvent;
    expect(renderEvent(event({ lines_added: 3, lines_removed: 1 }))).toBe(
      '    ~ modified src/a.ts (+3 -1, 120 bytes)',
    );
    expect(renderEvent(event({ change: 'deleted', size: null, more_changes: 4 }))).toBe(
      '    - deleted src/a.ts (was 100 bytes) (and 4 more files)',
    );
  });
});
