import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { gitToolbox } from '../../src/tools/builtin/git-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import {
  callError,
  callOk,
  toolContext,
  toolsSettings,
  useTemporaryDirectory,
} from '../helpers/tool-calls.js';

const directory = useTemporaryDirectory('git');
let repo: string;
let git: ToolBox;

function toolbox(workDir: string, section: Record<string, unknown> = {}): ToolBox {
  return gitToolbox({ workDir, settings: toolsSettings({ git: section }).git });
}

function commitCount(): number {
  return Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim());
}

beforeEach(() => {
  repo = join(directory.path, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
  git = toolbox(repo);
});

describe('git: status, add, diff, commit, log in a fresh repository', () => {
  it('goes from an untracked file to a commit by the configured default author', async () => {
    expect(await callOk(git, 'git_log', {})).toBe('(no commits yet)');
    writeFileSync(join(repo, 'a.txt'), 'first\n');
    expect(await callOk(git, 'git_status', {})).toContain('?? a.txt');
    expect(await callOk(git, 'git_add', { paths: ['a.txt'] })).toEqual({ staged: ['a.txt'] });
    expect(await callOk(git, 'git_diff', { staged: true })).toContain('+first');
    const commit = await callOk(git, 'git_commit', { message: 'Add a.txt' });
    expect(commit.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(commit.subject).toBe('Add a.txt');
    const log = await callOk(git, 'git_log', {});
    expect(log).toContain('Ratchet');
    expect(log).toContain('Add a.txt');
    writeFileSync(join(repo, 'a.txt'), 'second\n');
    expect(await callOk(git, 'git_diff', { paths: ['a.txt'] })).toContain('+second');
  });

  it('uses the author from the config', async () => {
    const configured = toolbox(repo, { author_name: 'Build Bot', author_email: 'bot@example.com' });
    writeFileSync(join(repo, 'b.txt'), 'b\n');
    await callOk(configured, 'git_add', { paths: ['b.txt'] });
    await callOk(configured, 'git_commit', { message: 'Add b' });
    const author = execFileSync('git', ['log', '-1', '--format=%an <%ae>'], { cwd: repo, encoding: 'utf8' });
    expect(author.trim()).toBe('Build Bot <bot@example.com>');
  });

  it('a rerun of the same commit call finds its commit instead of committing again', async () => {
    const commitTool = git.tools.find((tool) => tool.name === 'git_commit');
    expect(commitTool?.idempotent).toBe(true);
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    await callOk(git, 'git_add', { paths: ['a.txt'] });
    const context = toolContext({ idempotencyKey: 'tool:run_x:2:0' });
    const first = await callOk(git, 'git_commit', { message: 'Once' }, context);
    // The worker died after the commit, before recording it: the call runs again, with more staged meanwhile.
    writeFileSync(join(repo, 'c.txt'), 'c\n');
    await callOk(git, 'git_add', { paths: ['c.txt'] });
    const again = await callOk(git, 'git_commit', { message: 'Once' }, context);
    expect(again).toEqual({ commit: first.commit, already_committed: true });
    expect(commitCount()).toBe(1);
    const body = execFileSync('git', ['log', '-1', '--format=%B'], { cwd: repo, encoding: 'utf8' });
    expect(body).toContain('Ratchet-Call: tool:run_x:2:0');
    // Another call is another commit.
    await callOk(git, 'git_commit', { message: 'Twice' }, toolContext({ idempotencyKey: 'tool:run_x:3:0' }));
    expect(commitCount()).toBe(2);
  });

  it('does not run the repository hooks', async () => {
    const marker = join(directory.path, 'hook-ran');
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(hook, 0o755);
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    await callOk(git, 'git_add', { paths: ['a.txt'] });
    await callOk(git, 'git_commit', { message: 'No hooks' });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('git: refusals', () => {
  it('refuses paths that look like options, and paths outside the work dir', async () => {
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    expect(await callError(git, 'git_add', { paths: ['--all'] })).toContain(
      'paths[0]: "--all" starts with "-"',
    );
    expect(await callError(git, 'git_diff', { paths: ['a.txt', '-p'] })).toContain(
      'paths[1]: "-p" starts with "-"',
    );
    expect(await callError(git, 'git_add', { paths: ['../outside.txt'] })).toContain(
      'is outside the workspace',
    );
    expect(await callOk(git, 'git_status', {})).toContain('?? a.txt');
  });

  it('a commit needs a message, and something staged', async () => {
    expect(await callError(git, 'git_commit', { message: '   ' })).toContain(
      'message: a commit needs a message',
    );
    expect(await callError(git, 'git_commit', { message: 'Empty' })).toContain('git commit failed');
  });

  it('never falls back to an enclosing repository', async () => {
    const inner = join(repo, 'not-a-repo');
    mkdirSync(inner);
    expect(await callError(toolbox(inner), 'git_status', {})).toContain(
      'must be the top directory of a git repository',
    );
  });
});
