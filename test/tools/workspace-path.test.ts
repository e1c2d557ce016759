import { constants, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInWorkspace, resolveInWorkspace } from '../../src/tools/builtin/workspace/workspace-path.js';
import { useTemporaryDirectory } from '../helpers/tool-calls.js';

/**
 * A path is checked, then used: a symbolic link swapped in between must not lead the use outside. These
 * tests swap the link right after the check, as a racing process would.
 */
describe('openInWorkspace', () => {
  const directory = useTemporaryDirectory('workspace-path');
  const setUp = () => {
    const workspace = join(directory.path, 'workspace');
    const outside = join(directory.path, 'outside');
    mkdirSync(join(workspace, 'docs'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(workspace, 'docs', 'notes.txt'), 'inside');
    writeFileSync(join(outside, 'notes.txt'), 'secret');
    return { workspace, outside };
  };

  it('opens a file that is still where it was checked', async () => {
    const { workspace } = setUp();
    const file = await resolveInWorkspace(workspace, 'docs/notes.txt');
    const handle = await openInWorkspace(workspace, file, constants.O_RDONLY);
    try {
      expect(await handle.readFile('utf8')).toBe('inside');
    } finally {
      await handle.close();
    }
  });

  it('refuses a file replaced by a symbolic link after the check', async () => {
    const { workspace, outside } = setUp();
    const file = await resolveInWorkspace(workspace, 'docs/notes.txt');
    rmSync(file.absolute);
    symlinkSync(join(outside, 'notes.txt'), file.absolute);
    await expect(openInWorkspace(workspace, file, constants.O_RDONLY)).rejects.toThrow(
      'became a symbolic link while it was being opened',
    );
  });

  it('refuses a directory on the way replaced by a symbolic link after the check, and changes nothing there', async () => {
    const { workspace, outside } = setUp();
    const file = await resolveInWorkspace(workspace, 'docs/notes.txt');
    renameSync(join(workspace, 'docs'), join(workspace, 'docs-moved'));
    symlinkSync(outside, join(workspace, 'docs'));
    await expect(openInWorkspace(workspace, file, constants.O_WRONLY | constants.O_CREAT)).rejects.toThrow(
      'leads outside the workspace through a symbolic link',
    );
    expect(readFileSync(join(outside, 'notes.txt'), 'utf8')).toBe('secret');
  });
});
