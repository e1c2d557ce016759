import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
let marker: string;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  rmSync(marker, { force: true });
});

function results(chat: readonly Message[]) {
  return chat.flatMap((message) => toolResultsOf(message));
}

/**
 * The program a model runs with `node -e` (an allowed command, as in config/coding-agent.yaml): in the work
 * tree it creates a repository with `git init`, another behind a `.git` file, and turns the first into a
 * submodule in the outer configuration; each gets filters, diff drivers, an fsmonitor and hooks that run
 * `evil.sh`, and `.gitattributes` that assign them. All of it stays inside the workspace, as a sandboxed
 * command's writes must; the marker outside it appears only if git ran `evil.sh` on the worker.
 */
function plantingProgram(markerPath: string): string {
  return `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=m', '-c', 'user.email=m@m', '-c', 'core.hooksPath=/dev/null', ...args], { cwd });
const root = process.cwd();
const evil = path.join(root, 'evil.sh');
fs.writeFileSync(evil, '#!/bin/sh\\ntouch ${markerPath}\\nexec cat "$@"\\n', { mode: 0o755 });
const plant = (worktree, gitDir) => {
  fs.mkdirSync(worktree, { recursive: true });
  if (gitDir) fs.mkdirSync(path.dirname(gitDir), { recursive: true });
  git(worktree, 'init', '-q', ...(gitDir ? ['--separate-git-dir', gitDir] : []), '.');
  fs.writeFileSync(path.join(worktree, 'f.txt'), 'one\\n');
  git(worktree, 'add', 'f.txt');
  git(worktree, 'commit', '-q', '-m', 'inner');
  for (const [key, value] of [
    ['filter.evil.clean', evil], ['filter.evil.smudge', evil], ['diff.evil.command', evil],
    ['diff.evil.textconv', evil], ['core.fsmonitor', evil], ['diff.external', evil], ['core.pager', evil],
    ['status.submoduleSummary', 'true'], ['diff.submodule', 'diff'], ['submodule.recurse', 'true'],
  ]) git(worktree, 'config', key, value);
  fs.writeFileSync(path.join(worktree, '.gitattributes'), '* filter=evil diff=evil\\n');
  fs.writeFileSync(path.join(worktree, 'f.txt'), 'changed\\n');
  fs.writeFileSync(path.join(worktree, 'new.txt'), 'new\\n');
};
plant(path.join(root, 'nested'));
plant(path.join(root, 'elsewhere'), path.join(root, 'hidden', 'repo.git'));
for (const [key, value] of [
  ['submodule.recurse', 'true'], ['status.submoduleSummary', 'true'], ['diff.submodule', 'diff'],
  ['diff.ignoreSubmodules', 'none'], ['submodule.nested.ignore', 'none'],
]) git(root, 'config', key, value);
fs.writeFileSync(path.join(root, '.gitmodules'),
  '[submodule "nested"]\\n\\tpath = nested\\n\\turl = ./nested\\n\\tignore = none\\n');
fs.writeFileSync(path.join(root, 'a.txt'), 'a\\n');
`;
}

describe('a hostile model with exec cannot make the git tools run a program through a nested repository', () => {
  it('creates repositories in the work tree with exec, then calls every git tool: nothing runs, the tools answer', async () => {
    marker = join(tmpdir(), `ratchet-git-nested-marker-${randomBytes(6).toString('hex')}`);
    const gitCalls = [
      { name: 'git_status', arguments: {} },
      { name: 'git_diff', arguments: {} },
      { name: 'git_add', arguments: { paths: ['a.txt', 'nested', 'elsewhere', '.gitmodules'] } },
      { name: 'git_status', arguments: {} },
      { name: 'git_diff', arguments: { staged: true } },
      { name: 'git_diff', arguments: { paths: ['nested', 'elsewhere'] } },
      { name: 'git_commit', arguments: { message: 'Planted' } },
      { name: 'git_log', arguments: { paths: ['nested'] } },
      { name: 'git_commit', arguments: { message: 'Nothing left' } },
    ];
    harness = new Harness({
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'run_command', arguments: { command: 'node', args: ['-e', plantingProgram(marker)] } },
            ],
          },
          ...gitCalls.map((call) => ({ tool_calls: [call] })),
          { text: 'done' },
        ],
      },
      agent: { toolboxes: ['exec', 'git'] },
      maxIterations: 20,
      config: {
        tools: {
          workspace: 'workspace',
          // No bubblewrap on test machines: the sandbox is not what is under test (the program the model
          // plants runs, if at all, from git, which never runs in the sandbox).
          exec: { enabled: true, commands: ['node'], sandbox: 'none' },
        },
      },
    });
    const workspace = join(harness.dir, 'workspace');
    mkdirSync(workspace);
    execFileSync('git', ['init', '-q', workspace]);
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'commit a.txt' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, JSON.stringify(run)).toBe('completed');
    const outcomes = results(await harness.transcript(sessionId));
    const transcript = outcomes.map((outcome) => outcome.content).join('\n---\n');
    expect(existsSync(marker), transcript).toBe(false);
    const [planting, status, diff, add, staged, stagedDiff, nestedDiff, commit, log, nothing] = outcomes;
    expect(planting, transcript).toMatchObject({ is_error: false });
    expect(planting?.content).toContain('"exit_code":0');
    for (const outcome of [status, diff, add, staged, stagedDiff, nestedDiff, commit, log]) {
      expect(outcome, transcript).toMatchObject({ is_error: false });
    }
    expect(status?.content).toContain('?? nested/');
    expect(staged?.content).toContain('A  nested');
    expect(staged?.content).toContain('A  elsewhere');
    expect(stagedDiff?.content).toContain('new file mode 160000');
    expect(log?.content).toContain('Planted');
    expect(nothing).toMatchObject({ is_error: true });
    expect(nothing?.content).toContain('nothing is staged for the commit');
    expect(existsSync(marker)).toBe(false);
  });
});
