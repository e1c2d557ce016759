import { constants } from 'node:fs';
import { type FileHandle, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { lineStat } from '../../file-change.js';
import { defineTool, type JsonValue } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { openInWorkspace, resolveInWorkspace, type WorkspacePath } from '../workspace/workspace-path.js';

export interface FilesystemToolboxOptions {
  /** Absolute path of the workspace root. */
  workspace: string;
  settings: ToolsConfig['filesystem'];
}

const pathField = z.string().min(1).describe('a path relative to the workspace root');

/** `filesystem`: read, write, edit, list and inspect files inside the workspace. */
export function filesystemToolbox(options: FilesystemToolboxOptions): ToolBox {
  const { workspace, settings } = options;

  const readFileTool = defineTool({
    name: 'read_file',
    description:
      `Reads a text file of the workspace (at most ${settings.max_read_bytes} bytes at once; ` +
      'read a larger file in parts with offset and length).',
    inputSchema: z.strictObject({
      path: pathField,
      offset: z.int().nonnegative().optional().describe('byte to start at (default 0)'),
      length: z.int().positive().optional().describe('bytes to read (default and maximum: the read cap)'),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const file = await existingFile(workspace, input.path);
      context.signal.throwIfAborted();
      const handle = await openInWorkspace(workspace, file, constants.O_RDONLY);
      let size: number;
      let bytes: Buffer;
      const offset = input.offset ?? 0;
      try {
        size = (await handle.stat()).size;
        const wanted = Math.min(input.length ?? settings.max_read_bytes, settings.max_read_bytes);
        bytes = await readRange(handle, offset, Math.max(0, Math.min(wanted, size - offset)));
      } finally {
        await handle.close();
      }
      if (bytes.includes(0)) {
        throw new Error(
          `path: "${file.relative}" looks binary (it contains NUL bytes); read_file reads text`,
        );
      }
      const end = offset + bytes.length;
      return {
        path: file.relative,
        size,
        offset,
        content: bytes.toString('utf8'),
        truncated: end < size,
        ...(end < size ? { next_offset: end } : {}),
      };
    },
  });

  const writeFileTool = defineTool({
    name: 'write_file',
    description:
      'Writes a text file of the workspace (replacing it when it exists; missing directories are created).',
    inputSchema: z.strictObject({ path: pathField, content: z.string().describe('the whole new content') }),
    // Writing the same content again leaves the same file.
    idempotent: true,
    handler: async (context, input) => {
      refuseWhenReadOnly(settings);
      const file = await writablePath(workspace, input.path);
      if (file.exists && (await stat(file.absolute)).isDirectory()) {
        throw new Error(`path: "${file.relative}" is a directory; name a file`);
      }
      context.signal.throwIfAborted();
      await mkdir(dirname(file.absolute), { recursive: true });
      // Opened without truncating, checked, then replaced: a file outside is never emptied.
      const handle = await openInWorkspace(workspace, file, constants.O_RDWR | constants.O_CREAT);
      const bytes = Buffer.byteLength(input.content);
      try {
        const before = file.exists ? await previousText(handle, settings.max_read_bytes) : undefined;
        await handle.truncate(0);
        await handle.writeFile(input.content, { signal: context.signal });
        // Reported even when the content was already there: a call run again after a crash rewrites its own
        // file, and its change must still be reported once (as modified).
        const beforeText = before === undefined ? '' : before.text;
        context.recordFileChange({
          path: toSlashes(file.relative),
          change: before === undefined ? 'created' : 'modified',
          size: bytes,
          sizeBefore: before?.size ?? null,
          ...(beforeText === undefined ? {} : { lines: lineStat(beforeText, input.content) }),
        });
      } finally {
        await handle.close();
      }
      return { path: file.relative, bytes };
    },
  });

  const editFileTool = defineTool({
    name: 'edit_file',
    description:
      'Replaces an exact piece of text in a file of the workspace. old_string must occur exactly once ' +
      '(include surrounding lines to make it unique), unless replace_all is true.',
    inputSchema: z.strictObject({
      path: pathField,
      old_string: z.string().min(1).describe('the exact text to replace, whitespace included'),
      new_string: z.string().describe('the replacement'),
      replace_all: z.boolean().optional().describe('replace every occurrence (default false)'),
    }),
    // A second run finds the text already replaced: not safe to repeat blindly.
    idempotent: false,
    handler: async (context, input) => {
      refuseWhenReadOnly(settings);
      if (input.old_string === input.new_string) {
        throw new Error('new_string: is the same as old_string; nothing would change');
      }
      const file = await existingFile(workspace, input.path);
      refuseGitDirectory(file);
      const { size } = await stat(file.absolute);
      if (size > settings.max_read_bytes) {
        throw new Error(
          `path: "${file.relative}" is ${size} bytes, over the cap of ${settings.max_read_bytes} ` +
            '(tools.filesystem.max_read_bytes); edit it another way',
        );
      }
      context.signal.throwIfAborted();
      const handle = await openInWorkspace(workspace, file, constants.O_RDWR);
      try {
        const edited = await editOpenFile(handle, file, input, context.signal);
        context.recordFileChange({
          path: toSlashes(file.relative),
          change: 'modified',
          size: Buffer.byteLength(edited.text),
          sizeBefore: size,
          lines: lineStat(edited.before, edited.text),
        });
        return { path: file.relative, replacements: edited.replacements };
      } finally {
        await handle.close();
      }
    },
  });

  const listDirectoryTool = defineTool({
    name: 'list_directory',
    description: `Lists a directory of the workspace (at most ${settings.max_list_entries} entries).`,
    inputSchema: z.strictObject({
      path: pathField.optional().describe('a directory relative to the workspace root (default: the root)'),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const directory = await resolveInWorkspace(workspace, input.path ?? '.');
      if (!directory.exists) throw new Error(`path: "${input.path}" does not exist`);
      if (!(await stat(directory.absolute)).isDirectory()) {
        throw new Error(`path: "${directory.relative}" is a file; use read_file or stat_path`);
      }
      context.signal.throwIfAborted();
      const entries = await readdir(directory.absolute, { withFileTypes: true });
      entries.sort((a, b) => a.name.localeCompare(b.name));
      const shown = entries.slice(0, settings.max_list_entries).map((entry) => ({
        name: entry.name,
        type: entry.isSymbolicLink()
          ? 'symlink'
          : entry.isDirectory()
            ? 'directory'
            : entry.isFile()
              ? 'file'
              : 'other',
      }));
      return {
        path: directory.relative,
        entries: shown,
        ...(entries.length > shown.length ? { truncated: true, total: entries.length } : {}),
      };
    },
  });

  const statPathTool = defineTool({
    name: 'stat_path',
    description: 'Tells whether a path of the workspace exists, its type, size and modification time.',
    inputSchema: z.strictObject({ path: pathField }),
    idempotent: true,
    handler: async (context, input): Promise<JsonValue> => {
      context.signal.throwIfAborted();
      const target = await resolveInWorkspace(workspace, input.path);
      if (!target.exists) return { path: target.relative, exists: false };
      const info = await stat(target.absolute);
      return {
        path: target.relative,
        exists: true,
        type: info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other',
        size: info.size,
        modified: info.mtime.toISOString(),
        mode: (info.mode & 0o777).toString(8),
      };
    },
  });

  return createToolBox('filesystem', [
    readFileTool,
    writeFileTool,
    editFileTool,
    listDirectoryTool,
    statPathTool,
  ]);
}

async function existingFile(workspace: string, path: string): Promise<WorkspacePath> {
  const file = await resolveInWorkspace(workspace, path);
  if (!file.exists) throw new Error(`path: "${path}" does not exist; list_directory shows what does`);
  if (!(await stat(file.absolute)).isFile()) {
    throw new Error(`path: "${file.relative}" is not a file (a directory? use list_directory)`);
  }
  return file;
}

async function writablePath(workspace: string, path: string): Promise<WorkspacePath> {
  const file = await resolveInWorkspace(workspace, path);
  refuseGitDirectory(file);
  return file;
}

/** Git's own files steer what the git binary runs (hooks, filters): the model may not write them. */
function refuseGitDirectory(file: WorkspacePath): void {
  if (file.relative.split(/[\\/]/).includes('.git')) {
    throw new Error(`path: "${file.relative}" is inside a .git directory, which tools may not change`);
  }
}

function refuseWhenReadOnly(settings: ToolsConfig['filesystem']): void {
  if (settings.read_only) {
    throw new Error('the workspace is read-only (tools.filesystem.read_only: true); files cannot be changed');
  }
}

function replaceOnce(text: string, search: string, replacement: string): string {
  const index = text.indexOf(search);
  return text.slice(0, index) + replacement + text.slice(index + search.length);
}

async function readRange(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, offset);
  return buffer.subarray(0, bytesRead);
}

/** edit_file on the opened file: read, replace, write back through the same handle. */
async function editOpenFile(
  handle: FileHandle,
  file: WorkspacePath,
  input: { old_string: string; new_string: string; replace_all?: boolean | undefined },
  signal: AbortSignal,
) {
  const text = await handle.readFile({ encoding: 'utf8', signal });
  const occurrences = text.split(input.old_string).length - 1;
  if (occurrences === 0) {
    throw new Error(
      `old_string: not found in "${file.relative}"; copy the exact text (whitespace included) from read_file`,
    );
  }
  if (occurrences > 1 && input.replace_all !== true) {
    throw new Error(
      `old_string: occurs ${occurrences} times in "${file.relative}"; include more surrounding text to ` +
        'make it unique, or set replace_all: true',
    );
  }
  // split/join and slicing: String.replace would interpret `$&` and friends in new_string.
  const updated =
    occurrences === 1
      ? replaceOnce(text, input.old_string, input.new_string)
      : text.split(input.old_string).join(input.new_string);
  await handle.truncate(0);
  await handle.write(updated, 0, 'utf8');
  return { replacements: occurrences, before: text, text: updated };
}

/** A file's size before it is replaced, and its text when it is small enough to count lines of. */
async function previousText(
  handle: FileHandle,
  maxBytes: number,
): Promise<{ size: number; text: string | undefined }> {
  const { size } = await handle.stat();
  if (size > maxBytes) return { size, text: undefined };
  const bytes = await readRange(handle, 0, size);
  return { size, text: bytes.includes(0) ? undefined : bytes.toString('utf8') };
}

function toSlashes(path: string): string {
  return path.split('\\').join('/');
}
