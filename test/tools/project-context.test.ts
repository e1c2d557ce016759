import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectContextSource } from '../../src/tools/builtin/project-context.js';
import type { RunContextRequest } from '../../src/tools/index.js';
import { toolContext, toolsSettings, useTemporaryDirectory } from '../helpers/tool-calls.js';

const directory = useTemporaryDirectory('project-context');

function read(files: string[], maxBytes = 32_768): Promise<string> {
  const settings = toolsSettings({ project_context: { files, max_bytes: maxBytes } }).project_context;
  const source = projectContextSource(directory.path, settings);
  if (!source) throw new Error('expected a source');
  const request: RunContextRequest = {
    agent: 'coder',
    memory: toolContext().memory,
    now: new Date(),
    signal: new AbortController().signal,
  };
  return source.read(request);
}

describe('project context files, written by a hostile model', () => {
  it('a FIFO, a directory, a binary file, a path out and links out are refused without hanging; a missing file is skipped', async () => {
    execFileSync('mkfifo', [join(directory.path, 'fifo.md')]);
    mkdirSync(join(directory.path, 'dir.md'));
    writeFileSync(join(directory.path, 'binary.md'), Buffer.from([0x41, 0x00, 0x42]));
    symlinkSync('/etc/passwd', join(directory.path, 'passwd.md'));
    mkdirSync(join(directory.path, 'docs'));
    symlinkSync('/etc', join(directory.path, 'docs', 'etc'));
    writeFileSync(join(directory.path, 'ok.md'), 'fine');
    const text = await read([
      'fifo.md',
      'dir.md',
      'binary.md',
      'passwd.md',
      'docs/etc/passwd',
      '../outside.md',
      '/etc/hostname',
      'missing.md',
      'ok.md',
    ]);
    expect(text).not.toContain('root:x:0');
    expect(text).toContain('## fifo.md\n[not read: "fifo.md" is not a regular file]');
    expect(text).toContain('## dir.md\n[not read: "dir.md" is not a regular file]');
    expect(text).toContain('## binary.md\n[not read: "binary.md" looks binary]');
    expect(text).toContain(
      '## passwd.md\n[not read: "passwd.md" leads outside the workspace through a symbolic link]',
    );
    expect(text).toContain('## docs/etc/passwd\n[not read: "docs/etc/passwd" leads outside the workspace');
    expect(text).toContain('## ../outside.md\n[not read: "../outside.md" is outside the workspace');
    expect(text).toContain('## /etc/hostname\n[not read: "/etc/hostname" is outside the workspace');
    expect(text).not.toContain('missing.md');
    expect(text).toContain('## ok.md\nfine');
  });

  it('all files together are cut at max_bytes, and the files after the cut are not read', async () => {
    writeFileSync(join(directory.path, 'a.md'), 'aaaa');
    writeFileSync(join(directory.path, 'b.md'), 'bbbbbbbb');
    writeFileSync(join(directory.path, 'c.md'), 'cccc');
    const text = await read(['a.md', 'b.md', 'c.md'], 6);
    expect(text).toContain('## a.md\naaaa');
    expect(text).toContain('## b.md\nbb\n[cut: the project context files are read up to 6 bytes]');
    expect(text).not.toContain('c.md');
  });

  it('no files, or switched off: no source at all', () => {
    const off = toolsSettings({ project_context: { enabled: false } }).project_context;
    expect(projectContextSource(directory.path, off)).toBeUndefined();
  });
});
