import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { defineTool } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { resolveInWorkspace, workspaceRoot } from '../workspace/workspace-path.js';
import { confineArguments } from './command-arguments.js';
import { type Invocation, sandboxEnv, sandboxInvocation, sandboxUnavailable } from './exec-sandbox.js';
import { minimalEnv, type ProcessResult, runProcess } from './run-process.js';
import { changesBetween, maxSnapshotFiles, snapshotWorkspace } from './workspace-snapshot.js';

export interface ExecToolboxOptions {
  /** Absolute path of the workspace root. */
  workspace: string;
  settings: ToolsConfig['exec'];
  /** The bubblewrap binary; default `bwrap` from the worker's PATH (tests name a missing one). */
  bwrap?: string;
}

/** The sandbox's ready signal: the child's file descriptor 3, the pipe runProcess opens with `reportPipe`. */
const sandboxReadyFd = 3;

/** `exec`: runs allow-listed commands in the workspace (off unless tools.exec.enabled). */
export function execToolbox(options: ExecToolboxOptions): ToolBox {
  const { workspace, settings } = options;
  const allowed = settings.commands.length > 0 ? settings.commands.join(', ') : '(none)';
  // The model is told where it stands, so it does not retry paths it cannot reach.
  const confinement =
    settings.sandbox === 'none'
      ? 'Paths must stay inside the workspace.'
      : 'It runs in a sandbox that sees only the workspace and read-only system directories' +
        `${settings.network ? '' : ', without network'}; paths outside the workspace are refused.`;
  const runCommand = defineTool({
    name: 'run_command',
    description: settings.shell
      ? `Runs a shell command line in the workspace. Its first word must be one of: ${allowed}. ` +
        `Returns the exit code, stdout and stderr. ${confinement}`
      : `Runs a program in the workspace, without a shell (no pipes, globs or variables): one of ${allowed}, ` +
        `with its arguments as a list. Returns the exit code, stdout and stderr. ${confinement}`,
    inputSchema: z.strictObject({
      command: z
        .string()
        .min(1)
        .describe(settings.shell ? 'the command line' : 'the program to run, e.g. "ls"'),
      args: z.array(z.string()).optional().describe('its arguments, one per element'),
      cwd: z.string().min(1).optional().describe('directory to run in, relative to the workspace root'),
      timeout_ms: z
        .int()
        .positive()
        .max(settings.timeout_ms)
        .optional()
        .describe(`time limit (default and maximum ${settings.timeout_ms})`),
    }),
    // A command may change anything: after a crash the model is told the outcome is unknown.
    idempotent: false,
    handler: async (context, input) => {
      if (!settings.enabled) {
        throw new Error('running commands is disabled: set tools.exec.enabled: true in the config');
      }
      const invocation = commandLine(input.command, input.args ?? [], settings);
      const directory = await resolveInWorkspace(workspace, input.cwd ?? '.', 'cwd');
      if (!directory.exists || !(await stat(directory.absolute)).isDirectory()) {
        throw new Error(`cwd: "${input.cwd}" is not a directory of the workspace`);
      }
      const root = await workspaceRoot(workspace);
      await confineArguments(root, directory.relative, input.args ?? []);
      const timeoutMs = input.timeout_ms ?? settings.timeout_ms;
      const common = {
        cwd: directory.absolute,
        timeoutMs,
        maxOutputBytes: settings.max_output_bytes,
        signal: context.signal,
      };
      // The workspace before and after: what the command created, changed or deleted is reported.
      const before = await snapshotWorkspace(root, context.signal);
      const result =
        settings.sandbox === 'none'
          ? await runProcess({ ...invocation, ...common, env: minimalEnv() })
          : await runSandboxed(invocation, {
              ...common,
              bwrap: options.bwrap ?? 'bwrap',
              workspace: root,
              settings,
            });
      const after = await snapshotWorkspace(root, context.signal);
      for (const change of changesBetween(before, after)) context.recordFileChange(change);
      if (!before.complete || !after.complete) {
        context.logger.warn(
          `the workspace holds over ${maxSnapshotFiles} files: the command's file changes are not reported`,
        );
      }
      const notes = [
        ...(result.timedOut ? [`killed after ${timeoutMs} ms`] : []),
        ...(result.truncated
          ? [`output over ${settings.max_output_bytes} bytes (tools.exec.max_output_bytes): killed and cut`]
          : []),
      ];
      return {
        exit_code: result.exitCode,
        ...(result.signal === null ? {} : { signal: result.signal }),
        stdout: result.stdout,
        stderr: result.stderr,
        ...(result.timedOut ? { timed_out: true } : {}),
        ...(result.truncated ? { truncated: true } : {}),
        ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
      };
    },
  });
  return createToolBox('exec', [runCommand]);
}

interface SandboxedRun {
  bwrap: string;
  workspace: string;
  cwd: string;
  settings: ToolsConfig['exec'];
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
}

/**
 * Runs the command inside bubblewrap. A sandbox that cannot be set up is an error result, never a silent
 * run without it: the sandbox reports `ready` once it stands, so a run that ends without that report failed
 * in bubblewrap, not in the command.
 */
async function runSandboxed(invocation: Invocation, run: SandboxedRun): Promise<ProcessResult> {
  const sandboxed = sandboxInvocation(invocation, {
    bwrap: run.bwrap,
    workspace: run.workspace,
    cwd: run.cwd,
    settings: run.settings,
    readyFd: sandboxReadyFd,
  });
  let result: ProcessResult;
  try {
    result = await runProcess({
      ...sandboxed,
      cwd: run.cwd,
      env: sandboxEnv(),
      timeoutMs: run.timeoutMs,
      maxOutputBytes: run.maxOutputBytes,
      signal: run.signal,
      reportPipe: true,
    });
  } catch (error) {
    if ((error as { cause?: NodeJS.ErrnoException }).cause?.code === 'ENOENT') {
      throw sandboxUnavailable(`"${run.bwrap}" was not found on the worker's PATH`);
    }
    throw error;
  }
  if (result.report === '' && !result.timedOut && !result.truncated) {
    throw sandboxUnavailable(
      `bubblewrap could not set the sandbox up (${result.stderr.trim() || 'no message'})`,
    );
  }
  return result;
}

/** The program and arguments to start, once the command is checked against the allow-list. */
function commandLine(
  command: string,
  args: readonly string[],
  settings: ToolsConfig['exec'],
): { command: string; args: readonly string[] } {
  if (settings.shell) {
    if (args.length > 0)
      throw new Error('args: not used with tools.exec.shell: true; put them in the command line');
    const program = command.trim().split(/\s+/)[0] ?? '';
    refuseUnlisted(program, settings);
    return { command: '/bin/sh', args: ['-c', command] };
  }
  refuseUnlisted(command, settings);
  return { command, args };
}

function refuseUnlisted(program: string, settings: ToolsConfig['exec']): void {
  if (!settings.commands.includes(program)) {
    const allowed = settings.commands.length > 0 ? settings.commands.join(', ') : 'none';
    throw new Error(`command: "${program}" is not allowed (tools.exec.commands allows: ${allowed})`);
  }
}
