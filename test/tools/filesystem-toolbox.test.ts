import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { filesystemToolbox } from '../../src/tools/builtin/filesystem/filesystem-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import {
  callError,
  callOk,
  callTool,
  toolContext,
  toolsSettings,
  useTemporaryDirectory,
} from '../helpers/tool-calls.js';

const directory = useTemporaryDirectory('fs');
let workspace: string;
let outside: string;
let files: ToolBox;

function toolbox(filesystem: Record<string, unknown> = {}): ToolBox {
  return filesystemToolbox({ workspace, settings: toolsSettings({ filesystem }).filesystem });
}

beforeEach(() => {
  workspace = join(directory.path, 'workspace');
  outside = join(directory.path, 'outside');
  mkdirSync(join(workspace, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
  writeFileSync(join(workspace, 'sub', 'inner.txt'), 'inside');
  symlinkSync(outside, join(workspace, 'escape'));
  symlinkSync(join(outside, 'secret.txt'), join(workspace, 'secret-link'));
  symlinkSync(join(outside, 'created-through-link.txt'), join(workspace, 'dangling'));
  symlinkSync(join(workspace, 'sub', 'inner.txt'), join(workspace, 'inner-link'));
  files = toolbox();
});

describe('filesystem: reading and writing inside the workspace', () => {
  it('writes a file (creating directories) and reads it back', async () => {
    expect(await callOk(files, 'write_file', { path: 'notes/today.md', content: 'hello\nworld' })).toEqual({
      path: 'notes/today.md',
      bytes: 11,
    });
    expect(readFileSync(join(workspace, 'notes', 'today.md'), 'utf8')).toBe('hello\nworld');
    const read = await callOk(files, 'read_file', { path: 'notes/today.md' });
    expect(read).toMatchObject({
      path: 'notes/today.md',
      size: 11,
      content: 'hello\nworld',
      truncated: false,
    });
  });

  it('writing the same content twice leaves the same file (the tool is declared idempotent)', async () => {
    const write = files.tools.find((tool) => tool.name === 'write_file');
    expect(write?.idempotent).toBe(true);
    await callOk(files, 'write_file', { path: 'a.txt', content: 'same' });
    await callOk(files, 'write_file', { path: 'a.txt', content: 'same' });
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('same');
  });

  it('caps a read at max_read_bytes and reads the rest from next_offset', async () => {
    writeFileSync(join(workspace, 'long.txt'), 'abcdefghijklmnopqrstuvwxy');
    const capped = toolbox({ max_read_bytes: 10 });
    const first = await callOk(capped, 'read_file', { path: 'long.txt' });
    expect(first).toMatchObject({ content: 'abcdefghij', size: 25, truncated: true, next_offset: 10 });
    const last = await callOk(capped, 'read_file', { path: 'long.txt', offset: 20 });
    expect(last).toMatchObject({ content: 'uvwxy', truncated: false });
  });

  it('refuses to return a binary file as text', async () => {
    writeFileSync(join(workspace, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    expect(await callError(files, 'read_file', { path: 'image.bin' })).toContain('looks binary');
  });

  it('lists a directory and reports what a path is', async () => {
    const listing = await callOk(files, 'list_directory', {});
    expect(listing.entries).toEqual([
      { name: 'dangling', type: 'symlink' },
      { name: 'escape', type: 'symlink' },
      { name: 'inner-link', type: 'symlink' },
      { name: 'secret-link', type: 'symlink' },
      { name: 'sub', type: 'directory' },
    ]);
    expect(await callOk(files, 'stat_path', { path: 'sub/inner.txt' })).toMatchObject({
      exists: true,
      type: 'file',
      size: 6,
    });
    expect(await callOk(files, 'stat_path', { path: 'nothing-here' })).toEqual({
      path: 'nothing-here',
      exists: false,
    });
  });

  it('follows a symbolic link that stays inside the workspace', async () => {
    expect(await callOk(files, 'read_file', { path: 'inner-link' })).toMatchObject({
      path: 'sub/inner.txt',
      content: 'inside',
    });
  });

  it('accepts an absolute path inside the workspace', async () => {
    expect(await callOk(files, 'read_file', { path: join(workspace, 'sub', 'inner.txt') })).toMatchObject({
      content: 'inside',
    });
  });
});

describe('filesystem: edit_file', () => {
  beforeEach(() => writeFileSync(join(workspace, 'code.ts'), 'let a = 1;\nlet b = 1;\nlet c = 2;\n'));

  it('replaces a unique piece of text exactly (no $ patterns)', async () => {
    expect(
      await callOk(files, 'edit_file', { path: 'code.ts', old_string: 'c = 2', new_string: "c = '$&'" }),
    ).toEqual({ path: 'code.ts', replacements: 1 });
    expect(readFileSync(join(workspace, 'code.ts'), 'utf8')).toBe("let a = 1;\nlet b = 1;\nlet c = '$&';\n");
  });

  it('fails clearly when the text is missing or not unique, and changes nothing', async () => {
    expect(
      await callError(files, 'edit_file', { path: 'code.ts', old_string: 'let d', new_string: 'x' }),
    ).toContain('old_string: not found in "code.ts"');
    expect(
      await callError(files, 'edit_file', { path: 'code.ts', old_string: '= 1', new_string: '= 3' }),
    ).toContain('old_string: occurs 2 times in "code.ts"');
    expect(readFileSync(join(workspace, 'code.ts'), 'utf8')).toBe('let a = 1;\nlet b = 1;\nlet c = 2;\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const result = await callOk(files, 'edit_file', {
      path: 'code.ts',
      old_string: '= 1',
      new_string: '= 3',
      replace_all: true,
    });
    expect(result.replacements).toBe(2);
    expect(readFileSync(join(workspace, 'code.ts'), 'utf8')).toBe('let a = 3;\nlet b = 3;\nlet c = 2;\n');
  });

  it('is declared not idempotent (a rerun would find the text already replaced)', () => {
    expect(files.tools.find((tool) => tool.name === 'edit_file')?.idempotent).toBe(false);
  });
});

describe('filesystem: paths outside the workspace are refused', () => {
  it('refuses .. escapes', async () => {
    expect(await callError(files, 'read_file', { path: '../outside/secret.txt' })).toContain(
      'is outside the workspace',
    );
    expect(await callError(files, 'write_file', { path: 'sub/../../outside/x.txt', content: 'x' })).toContain(
      'is outside the workspace',
    );
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
  });

  it('refuses absolute paths outside', async () => {
    expect(await callError(files, 'read_file', { path: join(outside, 'secret.txt') })).toContain(
      'is outside the workspace',
    );
    expect(await callError(files, 'list_directory', { path: '/' })).toContain('is outside the workspace');
  });

  it('refuses symbolic links that lead outside, to files and through directories', async () => {
    expect(await callError(files, 'read_file', { path: 'secret-link' })).toContain('through a symbolic link');
    expect(await callError(files, 'read_file', { path: 'escape/secret.txt' })).toContain(
      'through a symbolic link',
    );
    expect(await callError(files, 'stat_path', { path: 'escape' })).toContain('through a symbolic link');
  });

  it('refuses to create a file through a link to a directory outside (checked on the parent)', async () => {
    expect(await callError(files, 'write_file', { path: 'escape/new.txt', content: 'x' })).toContain(
      'through a symbolic link',
    );
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
  });

  it('refuses to write through a dangling symbolic link', async () => {
    expect(await callError(files, 'write_file', { path: 'dangling', content: 'x' })).toContain(
      'symbolic link whose target does not exist',
    );
    expect(existsSync(join(outside, 'created-through-link.txt'))).toBe(false);
  });

  it('refuses to change files inside .git (hooks would run code)', async () => {
    expect(
      await callError(files, 'write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' }),
    ).toContain('inside a .git directory');
  });
});

describe('filesystem: read-only and cancellation', () => {
  it('refuses writes and edits when read_only', async () => {
    const readOnly = toolbox({ read_only: true });
    expect(await callError(readOnly, 'write_file', { path: 'a.txt', content: 'x' })).toContain(
      'tools.filesystem.read_only',
    );
    expect(
      await callError(readOnly, 'edit_file', {
        path: 'sub/inner.txt',
        old_string: 'inside',
        new_string: 'y',
      }),
    ).toContain('read-only');
    expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
    expect(await callOk(readOnly, 'read_file', { path: 'sub/inner.txt' })).toMatchObject({
      content: 'inside',
    });
  });

  it('stops when the call is aborted (the abort propagates, it is not a tool error)', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(
      callTool(
        files,
        'write_file',
        { path: 'late.txt', content: 'x' },
        toolContext({ signal: controller.signal }),
      ),
    ).rejects.toThrow(/aborted|cancelled/);
    expect(existsSync(join(workspace, 'late.txt'))).toBe(false);
  });
});
