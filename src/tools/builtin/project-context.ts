import { constants } from 'node:fs';
import type { ToolsConfig } from '../../config/index.js';
import { redactSecrets } from '../../secrets/index.js';
import type { RunContextSource } from '../toolbox.js';
import { openInWorkspace, resolveInWorkspace } from './workspace/workspace-path.js';

/**
 * The project's context files (`tools.project_context.files`, e.g. AGENTS.md), read from the workspace root
 * for the instructions of agents working on the workspace. A model may have written these files, so they are
 * read as confined as a model's own read_file: inside the workspace on their real path (a symbolic link
 * leading out is refused), opened without following a link swapped in, regular files only, and cut at
 * `max_bytes` for all files together. Secrets this process knows are redacted, as from read_file's result.
 */
export function projectContextSource(
  workspace: string,
  settings: ToolsConfig['project_context'],
): RunContextSource | undefined {
  if (!settings.enabled || settings.files.length === 0) return undefined;
  return {
    key: `project_context:${workspace}`,
    read: async ({ signal }) => {
      const sections: string[] = [];
      let budget = settings.max_bytes;
      for (const name of settings.files) {
        signal.throwIfAborted();
        const file = await readContextFile(workspace, name, budget);
        if (file.kind === 'missing') continue;
        if (file.kind === 'refused') {
          sections.push(`## ${name}\n[not read: ${file.reason}]`);
          continue;
        }
        budget -= file.bytes;
        const cut = file.cut
          ? `\n[cut: the project context files are read up to ${settings.max_bytes} bytes]`
          : '';
        sections.push(`## ${name}\n${redactSecrets(file.text)}${cut}`);
        if (budget <= 0) break;
      }
      if (sections.length === 0) return '';
      return ["The project's context files, from the workspace root:", ...sections].join('\n\n');
    },
  };
}

type ContextFile =
  | { kind: 'missing' }
  | { kind: 'refused'; reason: string }
  | { kind: 'read'; text: string; bytes: number; cut: boolean };

async function readContextFile(workspace: string, name: string, budget: number): Promise<ContextFile> {
  let resolved: Awaited<ReturnType<typeof resolveInWorkspace>>;
  try {
    resolved = await resolveInWorkspace(workspace, name);
  } catch (error) {
    return { kind: 'refused', reason: (error as Error).message.replace(/^path: /, '') };
  }
  if (!resolved.exists) return { kind: 'missing' };
  let handle: Awaited<ReturnType<typeof openInWorkspace>>;
  try {
    // Non-blocking: a FIFO put in the file's place would otherwise hold the worker until a writer came.
    handle = await openInWorkspace(workspace, resolved, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { kind: 'refused', reason: (error as Error).message.replace(/^path: /, '') };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'refused', reason: `"${resolved.relative}" is not a regular file` };
    const length = Math.max(0, Math.min(info.size, budget));
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return { kind: 'refused', reason: `"${resolved.relative}" looks binary` };
    return { kind: 'read', text: bytes.toString('utf8'), bytes: bytesRead, cut: info.size > bytesRead };
  } finally {
    await handle.close();
  }
}
