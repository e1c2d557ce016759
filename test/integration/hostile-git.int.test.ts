import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
let marker: string;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  rmSync(marker, { force: true });
});

/** A file outside the workspace that exists only if git ran a program the model named. */
function newMarker(): string {
  marker = join(tmpdir(), `ratchet-git-marker-${randomBytes(6).toString('hex')}`);
  return marker;
}

function results(chat: readonly Message[]) {
  return chat.flatMap((message) => toolResultsOf(message));
}

const gitCalls = [
  { name: 'git_status', arguments: {} },
  { name: 'git_add', arguments: { paths: ['a.txt'] } },
  { name: 'git_diff', arguments: { staged: true } },
  { name: 'git_commit', arguments: { message: 'Planted' } },
  { name: 'git_log', arguments: {} },
];

function gitHarness(script: Script): Harness {
  return new Harness({
    script,
    agent: { toolboxes: ['filesystem', 'git'] },
    config: { tools: { workspace: 'workspace' } },
  });
}

describe('a hostile model cannot make the git tools run a program', () => {
  it('plants a bare repository with program settings in a work dir without .git: every git call is refused', async () => {
    const program = `"touch ${newMarker()} && cat"`;
    const planted = {
      HEAD: 'ref: refs/heads/main\n',
      config:
        '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n' +
        `\tfsmonitor = ${program}\n[filter "x"]\n\tclean = ${program}\n`,
      'objects/info/keep': '',
      'refs/heads/keep': '',
      '.gitattributes': '* filter=x\n',
      'a.txt': 'a\n',
    };
    harness = gitHarness({
      replies: [
        {
          tool_calls: Object.entries(planted).map(([path, content]) => ({
            name: 'write_file',
            arguments: { path, content },
          })),
        },
        ...gitCalls.map((call) => ({ tool_calls: [call] })),
        { text: 'done' },
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'commit a.txt' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(existsSync(marker)).toBe(false);
    const outcomes = results(await harness.transcript(sessionId));
    const written = outcomes.slice(0, Object.keys(planted).length);
    for (const outcome of written) expect(outcome).toMatchObject({ is_error: false });
    const gitOutcomes = outcomes.slice(written.length);
    expect(gitOutcomes).toHaveLength(gitCalls.length);
    for (const outcome of gitOutcomes) {
      expect(outcome).toMatchObject({ is_error: true });
      expect(outcome.content).toContain('must be the top directory of a git repository');
      expect(outcome.content).toContain('run git init there');
    }
  });

  it('in a real repository, cannot write .git and cannot get a configured filter run through .gitattributes', async () => {
    const program = `touch ${newMarker()} && cat`;
    harness = gitHarness({
      replies: [
        {
          tool_calls: [
            { name: 'write_file', arguments: { path: '.git/config', content: '[core]\n\tbare = false\n' } },
            {
              name: 'write_file',
              arguments: { path: 'docs/../.git/hooks/pre-commit', content: '#!/bin/sh\n' },
            },
            { name: 'write_file', arguments: { path: '.gitattributes', content: '* filter=lfs\n' } },
            { name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } },
          ],
        },
        ...gitCalls.map((call) => ({ tool_calls: [call] })),
        { text: 'done' },
      ],
    });
    // The operator's repository configures a filter; the model assigns it to every file.
    const workspace = join(harness.dir, 'workspace');
    mkdirSync(workspace);
    execFileSync('git', ['init', '-q', workspace]);
    execFileSync('git', ['config', 'filter.lfs.clean', program], { cwd: workspace });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'commit a.txt' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(existsSync(marker)).toBe(false);
    const [gitConfig, hook, attributes, file, status, add, diff, commit, log] = results(
      await harness.transcript(sessionId),
    );
    expect(gitConfig?.content).toContain('inside a .git directory');
    expect(hook?.content).toContain('inside a .git directory');
    for (const outcome of [attributes, file, status, add, diff, commit, log]) {
      expect(outcome).toMatchObject({ is_error: false });
    }
    expect(diff?.content).toContain('+a');
    expect(log?.content).toContain('Planted');
  });
});
