import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { defineTool, type JsonValue } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { minimalEnv, type ProcessResult, runProcess } from '../exec/run-process.js';
import { resolveInWorkspace, workspaceRoot } from '../workspace/workspace-path.js';
import {
  checkConfigKeys,
  checkRepository,
  gitEnvironment,
  gitGlobalOptions,
  ignoreSubmodules,
} from './git-environment.js';

export interface GitToolboxOptions {
  /** Absolute path of the repository's top directory. */
  workDir: string;
  settings: ToolsConfig['git'];
}

/** The trailer `git_commit` adds, so a rerun of the same call finds its commit instead of committing twice. */
export const callTrailer = 'Ratchet-Call';

const pathsField = z.array(z.string().min(1)).describe('paths relative to the repository');

/** `git`: status, diff, log, add and commit in the configured repository. */
export function gitToolbox(options: GitToolboxOptions): ToolBox {
  const git = gitRunner(options);

  const status = defineTool({
    name: 'git_status',
    description:
      'Shows the branch and the changed, staged and untracked files (git status --short --branch).',
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context) =>
      (await git.run(['status', '--short', '--branch', ignoreSubmodules], context.signal)).text,
  });

  const diff = defineTool({
    name: 'git_diff',
    description: 'Shows unstaged changes, or staged ones with staged: true, optionally for some paths only.',
    inputSchema: z.strictObject({
      staged: z.boolean().optional().describe('show what is staged for the next commit (default false)'),
      paths: pathsField.optional(),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const paths = await git.paths(input.paths ?? []);
      const args = [
        'diff',
        ...(input.staged ? ['--cached'] : []),
        '--no-ext-diff',
        '--no-textconv',
        ignoreSubmodules,
      ];
      const { text } = await git.run([...args, '--', ...paths], context.signal);
      return text === '' ? '(no changes)' : text;
    },
  });

  const log = defineTool({
    name: 'git_log',
    description: 'Lists recent commits (hash, author, date, subject), optionally touching some paths only.',
    inputSchema: z.strictObject({
      max_count: z.int().min(1).max(200).optional().describe('how many commits (default 20)'),
      paths: pathsField.optional(),
    }),
    idempotent: true,
    handler: async (context, input) => {
      if (!(await git.hasCommits(context.signal))) return '(no commits yet)';
      const paths = await git.paths(input.paths ?? []);
      const args = [
        'log',
        '--no-ext-diff',
        '--no-textconv',
        ignoreSubmodules,
        `--max-count=${input.max_count ?? 20}`,
        '--date=iso-strict',
        '--format=%h %an %ad %s',
      ];
      return (await git.run([...args, '--', ...paths], context.signal)).text;
    },
  });

  const add = defineTool({
    name: 'git_add',
    description: 'Stages files for the next commit (git add).',
    inputSchema: z.strictObject({ paths: pathsField.min(1) }),
    idempotent: true,
    handler: async (context, input) => {
      const paths = await git.paths(input.paths);
      await git.run(['add', '--', ...paths], context.signal);
      return { staged: paths };
    },
  });

  const commit = defineTool({
    name: 'git_commit',
    description: 'Commits what is staged, with a message (stage files with git_add first).',
    inputSchema: z.strictObject({
      message: z.string().trim().min(1, { error: 'a commit needs a message' }).describe('the commit message'),
    }),
    // Safe to rerun: the commit carries the call's idempotency key in a trailer, and a rerun that finds it
    // reports that commit instead of committing again.
    idempotent: true,
    handler: async (context, input): Promise<JsonValue> => {
      const trailer = `${callTrailer}: ${context.idempotencyKey}`;
      const earlier = await git.commitWithTrailer(trailer, context.signal);
      if (earlier !== undefined) return { commit: earlier, already_committed: true };
      // git commit with nothing to commit prints a full status, which takes no --ignore-submodules and would
      // look into nested repositories but for diff.ignoreSubmodules: that case is answered here, without git.
      if (!(await git.hasStagedChanges(context.signal))) {
        throw new Error(
          'git commit failed: nothing is staged for the commit; stage files with git_add first ' +
            '(git_status lists what changed)',
        );
      }
      // --quiet: no summary of the commit, whose diff reads .gitmodules; an invalid one there made git fail
      // after committing.
      await git.run(
        ['commit', '--quiet', '--no-verify', '--message', input.message, '--message', trailer],
        context.signal,
      );
      const head = (await git.run(['rev-parse', 'HEAD'], context.signal)).text.trim();
      return { commit: head, subject: input.message.split('\n')[0] ?? '' };
    },
  });

  return createToolBox('git', [status, diff, log, add, commit]);
}

interface GitRunner {
  /** Runs git; a non-zero exit is an error carrying git's message. */
  run(args: readonly string[], signal: AbortSignal): Promise<{ text: string }>;
  hasCommits(signal: AbortSignal): Promise<boolean>;
  /** Whether the index differs from HEAD (from the empty tree before the first commit). */
  hasStagedChanges(signal: AbortSignal): Promise<boolean>;
  /** The hash of a recent commit whose message contains `text`. */
  commitWithTrailer(text: string, signal: AbortSignal): Promise<string | undefined>;
  /** Checks paths from the model: no options, nothing outside the work dir. Returns them relative. */
  paths(paths: readonly string[]): Promise<string[]>;
}

function gitRunner(options: GitToolboxOptions): GitRunner {
  const { settings } = options;
  const name = settings.author_name ?? process.env.GIT_AUTHOR_NAME ?? 'Ratchet';
  const email = settings.author_email ?? process.env.GIT_AUTHOR_EMAIL ?? 'ratchet@localhost';
  const author = {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
  const spawnIn = (
    workDir: string,
    args: readonly string[],
    configKeys: readonly string[] | undefined,
    signal: AbortSignal,
  ) =>
    runProcess({
      command: 'git',
      args: [...gitGlobalOptions, ...args],
      cwd: workDir,
      env: minimalEnv({ ...gitEnvironment({ workDir, configKeys }), ...author }),
      timeoutMs: settings.timeout_ms,
      maxOutputBytes: settings.max_output_bytes,
      signal,
    });
  /**
   * Every command: check the repository, read the names of its configuration keys (reading runs nothing),
   * refuse includes, then run with the filters it defines switched off.
   */
  const spawnGit = async (args: readonly string[], signal: AbortSignal): Promise<ProcessResult> => {
    const workDir = await workspaceRoot(options.workDir);
    await checkRepository(workDir, options.workDir);
    const listed = await spawnIn(
      workDir,
      ['config', '--no-includes', '--null', '--name-only', '--list'],
      undefined,
      signal,
    );
    if (listed.exitCode !== 0 || listed.truncated || listed.timedOut) {
      throw new Error(gitFailure(['config'], listed, options.workDir));
    }
    const configKeys = listed.stdout.split('\0').filter((key) => key !== '');
    checkConfigKeys(configKeys, options.workDir);
    return spawnIn(workDir, args, configKeys, signal);
  };
  const run = async (args: readonly string[], signal: AbortSignal) => {
    const result = await spawnGit(args, signal);
    if (result.timedOut)
      throw new Error(`git ${args[0]} took longer than ${settings.timeout_ms} ms (tools.git.timeout_ms)`);
    if (result.exitCode !== 0) throw new Error(gitFailure(args, result, options.workDir));
    const cut = result.truncated
      ? `\n[output cut at ${settings.max_output_bytes} bytes (tools.git.max_output_bytes)]`
      : '';
    return { text: result.stdout + cut };
  };
  const hasCommits = async (signal: AbortSignal) =>
    (await spawnGit(['rev-parse', '--verify', '--quiet', 'HEAD'], signal)).exitCode === 0;
  return {
    run,
    hasCommits,
    async hasStagedChanges(signal) {
      // Plumbing: diff-index --cached compares the index with a tree and nothing else, reads no diff.*
      // settings, and never looks inside a submodule's work tree.
      const base = (await hasCommits(signal))
        ? 'HEAD'
        : (await run(['hash-object', '-t', 'tree', '--no-filters', '/dev/null'], signal)).text.trim();
      const args = ['diff-index', '--cached', '--quiet', ignoreSubmodules, base, '--'];
      const result = await spawnGit(args, signal);
      if (result.exitCode === 0 || result.exitCode === 1) return result.exitCode === 1;
      throw new Error(gitFailure(args, result, options.workDir));
    },
    async commitWithTrailer(text, signal) {
      if (!(await hasCommits(signal))) return undefined;
      const found = await run(
        ['log', '--max-count=200', '--format=%H', '--fixed-strings', `--grep=${text}`],
        signal,
      );
      const hash = found.text.split('\n')[0]?.trim();
      return hash === undefined || hash === '' ? undefined : hash;
    },
    async paths(paths) {
      const checked: string[] = [];
      for (const [index, path] of paths.entries()) {
        const field = `paths[${index}]`;
        if (path.startsWith('-')) {
          throw new Error(`${field}: "${path}" starts with "-"; name a path (options are not accepted)`);
        }
        checked.push((await resolveInWorkspace(options.workDir, path, field)).relative);
      }
      return checked;
    },
  };
}

function gitFailure(args: readonly string[], result: ProcessResult, workDir: string): string {
  const message = (result.stderr.trim() || result.stdout.trim() || `exit code ${result.exitCode}`).slice(
    0,
    2000,
  );
  const hint = /not a git repository/i.test(message)
    ? ` (tools.git.work_dir "${workDir}" must be the top directory of a git repository: run git init there)`
    : '';
  return `git ${args[0]} failed: ${message}${hint}`;
}
