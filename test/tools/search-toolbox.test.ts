import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { compileGlob, maxGlobLength } from '../../src/tools/builtin/search/glob-pattern.js';
import { searchToolbox } from '../../src/tools/builtin/search/search-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import { watchEventLoop } from '../helpers/event-loop-gaps.js';
import { callError, callOk, toolsSettings, useTemporaryDirectory } from '../helpers/tool-calls.js';

describe('compileGlob', () => {
  const matches = (pattern: string, path: string) => compileGlob(pattern).matches(path);

  it('* and ? stay within one path segment', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true);
    expect(matches('*.ts', 'src/a.ts')).toBe(false);
    expect(matches('src/?.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/?.ts', 'src/ab.ts')).toBe(false);
  });

  it('** spans any number of directories, including none', () => {
    expect(matches('**/*.ts', 'a.ts')).toBe(true);
    expect(matches('**/*.ts', 'src/deep/er/a.ts')).toBe(true);
    expect(matches('src/**/test.ts', 'src/test.ts')).toBe(true);
    expect(matches('src/**/test.ts', 'src/a/b/test.ts')).toBe(true);
    expect(matches('src/**', 'src/a/b.js')).toBe(true);
    expect(matches('src/**', 'lib/a.js')).toBe(false);
  });

  it('{a,b} alternatives, nested, and character classes', () => {
    expect(matches('src/{lib,test}/*.js', 'src/test/x.js')).toBe(true);
    expect(matches('src/{lib,test}/*.js', 'src/other/x.js')).toBe(false);
    expect(matches('*.{ts,{m,c}js}', 'x.mjs')).toBe(true);
    expect(matches('file[0-9].txt', 'file7.txt')).toBe(true);
    expect(matches('file[!0-9].txt', 'file7.txt')).toBe(false);
  });

  it('takes regex characters literally and reports an unclosed brace', () => {
    expect(matches('a+b(1).txt', 'a+b(1).txt')).toBe(true);
    expect(matches('a.txt', 'abtxt')).toBe(false);
    expect(() => compileGlob('src/{a,b')).toThrow('has a "{" without its "}"');
  });

  it('matches hostile globs correctly in linear time (a RegExp took 85 s on the first of them)', () => {
    const stars = `${'*a'.repeat(12)}b`;
    expect(matches(stars, 'a'.repeat(40))).toBe(false);
    expect(matches(stars, `${'a'.repeat(40)}b`)).toBe(true);
    expect(matches(stars, `${'a'.repeat(11)}b`)).toBe(false);
    const segments = `${'**/'.repeat(10)}b`;
    expect(matches(segments, `${'a/'.repeat(30)}c`)).toBe(false);
    expect(matches(segments, `${'a/'.repeat(30)}b`)).toBe(true);
    const nested = `${'{a,'.repeat(100)}b${'}'.repeat(100)}*`;
    expect(matches(nested, 'a'.repeat(4000))).toBe(true);
    expect(matches(nested, `b${'/'.repeat(2)}`)).toBe(false);
    // The longest glob against a path as long as Linux allows: still one pass over the path.
    const longest = `${'*a'.repeat(249)}b`;
    expect(longest.length).toBeLessThanOrEqual(maxGlobLength);
    expect(matches(longest, 'a'.repeat(4000))).toBe(false);
    expect(matches(longest, `${'a'.repeat(4000)}b`)).toBe(true);
  });

  it('refuses a glob over the length limit and a range out of order, naming the field', () => {
    expect(() => compileGlob('a'.repeat(maxGlobLength + 1), 'include')).toThrow(
      `include: is ${maxGlobLength + 1} characters long, over the limit of ${maxGlobLength}`,
    );
    expect(() => compileGlob('file[z-a].txt')).toThrow('pattern: the range "z-a" in "[z-a]" is out of order');
    expect(matches('[^a].txt', '/.txt')).toBe(false);
    expect(matches('[a-c\\].txt', '\\.txt')).toBe(true);
    expect(matches('?.txt', '😀.txt')).toBe(true);
  });
});

describe('search toolbox', () => {
  const directory = useTemporaryDirectory('search');
  let workspace: string;
  let search: ToolBox;
  const toolbox = (section: Record<string, unknown> = {}, maxFileBytes = 1_048_576) =>
    searchToolbox({ workspace, settings: toolsSettings({ search: section }).search, maxFileBytes });

  beforeEach(() => {
    workspace = join(directory.path, 'workspace');
    const outside = join(directory.path, 'outside');
    mkdirSync(join(workspace, 'src', 'lib'), { recursive: true });
    mkdirSync(join(workspace, '.git'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(workspace, 'README.md'), '# Project\nTODO: write docs\n');
    writeFileSync(join(workspace, 'src', 'main.ts'), 'import x from "./lib/x";\n// TODO: main\nexport {};\n');
    writeFileSync(join(workspace, 'src', 'lib', 'x.ts'), 'export default 1; // todo lower\n');
    writeFileSync(join(workspace, 'src', 'data.bin'), Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00]));
    writeFileSync(join(workspace, '.git', 'config'), 'TODO in git internals\n');
    writeFileSync(join(outside, 'leak.ts'), '// TODO: outside secret\n');
    symlinkSync(outside, join(workspace, 'escape'));
    symlinkSync(join(workspace, 'src'), join(workspace, 'src', 'lib', 'loop'));
    search = toolbox();
  });

  it('glob lists matching files, skipping .git and links that leave the workspace', async () => {
    expect(await callOk(search, 'glob', { pattern: '**/*.ts' })).toEqual({
      paths: ['src/main.ts', 'src/lib/x.ts'],
    });
    expect(await callOk(search, 'glob', { pattern: '*.md' })).toEqual({ paths: ['README.md'] });
    expect(await callOk(search, 'glob', { pattern: '*.ts', path: 'src' })).toEqual({
      paths: ['src/main.ts'],
    });
  });

  it('grep finds lines by regular expression, with line numbers, skipping binary files and escapes', async () => {
    expect(await callOk(search, 'grep', { pattern: 'TODO' })).toEqual({
      matches: [
        { path: 'README.md', line: 2, text: 'TODO: write docs' },
        { path: 'src/main.ts', line: 2, text: '// TODO: main' },
      ],
    });
    const ignoringCase = await callOk(search, 'grep', {
      pattern: 'todo',
      ignore_case: true,
      include: '**/*.ts',
    });
    expect(ignoringCase.matches.map((match: { path: string }) => match.path)).toEqual([
      'src/main.ts',
      'src/lib/x.ts',
    ]);
    expect(await callOk(search, 'grep', { pattern: '^export', path: 'src/lib/x.ts' })).toEqual({
      matches: [{ path: 'src/lib/x.ts', line: 1, text: 'export default 1; // todo lower' }],
    });
  });

  it('caps the number of results and says so', async () => {
    const capped = toolbox({ max_results: 1 });
    expect(await callOk(capped, 'grep', { pattern: 'TODO' })).toMatchObject({
      matches: [{ path: 'README.md' }],
      truncated: true,
    });
    expect(await callOk(capped, 'glob', { pattern: '**' })).toMatchObject({
      paths: ['README.md'],
      truncated: true,
    });
  });

  it('caps the number of files looked at', async () => {
    const result = await callOk(toolbox({ max_files: 2 }), 'glob', { pattern: '**' });
    expect(result.paths).toHaveLength(2);
    expect(result.note).toContain('tools.search.max_files');
  });

  it('a bad regular expression is a clear error', async () => {
    expect(await callError(search, 'grep', { pattern: 'todo(' })).toContain(
      'pattern: not a valid regular expression',
    );
  });

  it('stops a regular expression that backtracks catastrophically at regex_timeout_ms, with a clear error', async () => {
    writeFileSync(join(workspace, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    const started = Date.now();
    const message = await callError(toolbox({ regex_timeout_ms: 200 }), 'grep', {
      pattern: '(a+)+$',
      path: 'evil.txt',
    });
    expect(message).toContain('took too long (the regular expression may backtrack catastrophically');
    // Interrupted at the deadline, not after the ~2^40 steps the pattern would take (generous: the machine
    // may be busy).
    expect(Date.now() - started).toBeLessThan(30_000);
    // The same toolbox keeps working afterwards.
    expect(await callOk(search, 'grep', { pattern: 'write docs' })).toMatchObject({ matches: [{ line: 2 }] });
  });

  it('a hostile glob over a long file name never blocks the event loop (glob pattern and grep include)', async () => {
    // About 7 s of backtracking for each file name with a RegExp; the loop must keep turning meanwhile.
    const hostile = `${'*a'.repeat(12)}b`;
    writeFileSync(join(workspace, 'a'.repeat(32)), 'x\n');
    writeFileSync(join(workspace, `${'a'.repeat(31)}b`), 'x\n');
    const loop = watchEventLoop();
    let longestGap = 0;
    try {
      expect(await callOk(search, 'glob', { pattern: hostile })).toEqual({ paths: [`${'a'.repeat(31)}b`] });
      expect(await callOk(search, 'grep', { pattern: 'x', include: hostile })).toEqual({
        matches: [{ path: `${'a'.repeat(31)}b`, line: 1, text: 'x' }],
      });
    } finally {
      longestGap = loop.stop();
    }
    // A generous bound: the point is seconds versus milliseconds.
    expect(longestGap).toBeLessThan(1_000);
  });

  it('a glob over the length limit is an error naming the field', async () => {
    expect(await callError(search, 'glob', { pattern: '*'.repeat(maxGlobLength + 1) })).toContain(
      `a glob may be at most ${maxGlobLength} characters long`,
    );
    expect(await callError(search, 'grep', { pattern: 'x', include: '*'.repeat(maxGlobLength + 1) })).toMatch(
      /include.*a glob may be at most/s,
    );
  });

  it('refuses a search path outside the workspace', async () => {
    expect(await callError(search, 'grep', { pattern: 'TODO', path: '../outside' })).toContain(
      'is outside the workspace',
    );
    expect(await callError(search, 'glob', { pattern: '*', path: 'escape' })).toContain(
      'through a symbolic link',
    );
  });
});
