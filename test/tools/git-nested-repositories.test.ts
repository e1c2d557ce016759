import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { gitToolbox } from '../../src/tools/builtin/git/git-toolbox.js';
import type { ToolBox } from '../../src/tools/index.js';
import {
  callError,
  callOk,
  callTool,
  toolContext,
  toolsSettings,
  useTemporaryDirectory,
} from '../helpers/tool-calls.js';

/**
 * With `exec` enabled a model can write anything under the work dir, `.git` directories included: it can
 * create repositories inside the work tree (`git init`, a `.git` file or symbolic link pointing elsewhere, a
 * submodule), give them a configuration naming programs and a `.gitattributes` assigning them, and edit the
 * outer repository's configuration and `.gitmodules` so that git recurses into them. Here the test plays
 * that model (it writes the files directly), then calls every git tool; each planted program, if git ran
 * it, leaves a marker file named after the setting.
 */
const directory = useTemporaryDirectory('git-nested');

let repo: string;
let markers: string;
let scripts: string;

/** The test's own git commands: no configuration of the machine, an author, file transport for the submodule. */
function gitIn(cwd: string, args: readonly string[]): string {
  return execFileSync(
    'git',
    ['-c', 'protocol.file.allow=always', '-c', 'core.hooksPath=/dev/null', ...args],
    {
      cwd,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: directory.path,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 'Test',
        GIT_AUTHOR_EMAIL: 'test@localhost',
        GIT_COMMITTER_NAME: 'Test',
        GIT_COMMITTER_EMAIL: 'test@localhost',
      },
    },
  );
}

/** An executable that leaves the marker `<where>-<setting>` and then behaves like cat (as a filter must). */
function program(where: string, setting: string): string {
  const path = join(scripts, `${where}-${setting.replaceAll(/[^\w.-]/g, '_')}`);
  writeFileSync(path, `#!/bin/sh\ntouch '${join(markers, `${where}-${setting}`)}'\nexec cat "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Every hook git knows of, in `hooksDir`, each leaving its marker. */
function plantHooks(where: string, hooksDir: string): void {
  mkdirSync(hooksDir, { recursive: true });
  for (const hook of [
    'pre-commit',
    'prepare-commit-msg',
    'commit-msg',
    'post-commit',
    'post-checkout',
    'post-index-change',
    'pre-auto-gc',
    'reference-transaction',
    'fsmonitor-watchman',
  ]) {
    const path = join(hooksDir, hook);
    writeFileSync(path, `#!/bin/sh\ntouch '${join(markers, `${where}-hook-${hook}`)}'\n`);
    chmodSync(path, 0o755);
  }
}

/**
 * Writes into the configuration of the repository whose git directory is `gitDir` every setting that names a
 * program or makes git recurse into other repositories, and an include of a second file doing the same.
 */
function plantConfig(where: string, gitDir: string): void {
  const settings: [string, string][] = [
    ['core.fsmonitor', program(where, 'core.fsmonitor')],
    ['core.hooksPath', join(gitDir, 'planted-hooks')],
    ['core.sshCommand', program(where, 'core.sshCommand')],
    ['core.gitProxy', program(where, 'core.gitProxy')],
    ['core.pager', program(where, 'core.pager')],
    ['core.editor', program(where, 'core.editor')],
    ['core.askPass', program(where, 'core.askPass')],
    ['core.alternateRefsCommand', program(where, 'core.alternateRefsCommand')],
    ['sequence.editor', program(where, 'sequence.editor')],
    ['pager.status', program(where, 'pager.status')],
    ['pager.diff', program(where, 'pager.diff')],
    ['pager.log', program(where, 'pager.log')],
    ['diff.external', program(where, 'diff.external')],
    ['diff.evil.command', program(where, 'diff.evil.command')],
    ['diff.evil.textconv', program(where, 'diff.evil.textconv')],
    ['diff.evil.cachetextconv', 'false'],
    ['filter.evil.clean', program(where, 'filter.evil.clean')],
    ['filter.evil.smudge', program(where, 'filter.evil.smudge')],
    ['filter.lfs.process', program(where, 'filter.lfs.process')],
    ['merge.evil.driver', program(where, 'merge.evil.driver')],
    ['gpg.program', program(where, 'gpg.program')],
    ['gpg.ssh.program', program(where, 'gpg.ssh.program')],
    ['gpg.x509.program', program(where, 'gpg.x509.program')],
    ['commit.gpgSign', 'true'],
    ['log.showSignature', 'true'],
    ['credential.helper', `!${program(where, 'credential.helper')}`],
    ['remote.origin.url', `ext::${program(where, 'remote.ext')}`],
    ['remote.origin.uploadpack', program(where, 'remote.uploadpack')],
    ['remote.origin.receivepack', program(where, 'remote.receivepack')],
    ['uploadpack.packObjectsHook', program(where, 'uploadpack.packObjectsHook')],
    ['protocol.allow', 'always'],
    ['protocol.ext.allow', 'always'],
    ['submodule.recurse', 'true'],
    ['fetch.recurseSubmodules', 'true'],
    ['status.submoduleSummary', 'true'],
    ['diff.submodule', 'diff'],
    ['diff.ignoreSubmodules', 'none'],
    ['gc.auto', '1'],
    ['maintenance.auto', 'true'],
  ];
  plantHooks(where, join(gitDir, 'planted-hooks'));
  plantHooks(where, join(gitDir, 'hooks'));
  const included = join(gitDir, 'included.cfg');
  writeFileSync(
    included,
    `[filter "inc"]\n\tclean = ${program(where, 'included-filter.clean')}\n` +
      `[diff "inc"]\n\ttextconv = ${program(where, 'included-diff.textconv')}\n`,
  );
  const includedIf = join(gitDir, 'included-if.cfg');
  writeFileSync(includedIf, `[core]\n\tfsmonitor = ${program(where, 'included-if-fsmonitor')}\n`);
  settings.push(['include.path', included], ['includeIf.gitdir:/.path', includedIf]);
  for (const [key, value] of settings) gitIn(gitDir, ['--git-dir', gitDir, 'config', key, value]);
}

/** A `.gitattributes` assigning the planted drivers, and changed files for them to run on. */
function plantWorkTree(worktree: string): void {
  writeFileSync(
    join(worktree, '.gitattributes'),
    '* filter=evil diff=evil merge=evil\ninc.txt filter=inc diff=inc\nlfs.txt filter=lfs\n',
  );
  for (const file of ['file.txt', 'inc.txt', 'lfs.txt']) writeFileSync(join(worktree, file), 'changed\n');
  writeFileSync(join(worktree, 'untracked.txt'), 'new\n');
}

/** A repository with one commit of `file.txt`, `inc.txt` and `lfs.txt`. */
function committedRepository(path: string, gitDir?: string): void {
  mkdirSync(path, { recursive: true });
  gitIn(path, ['init', '-q', ...(gitDir === undefined ? [] : ['--separate-git-dir', gitDir]), '.']);
  for (const file of ['file.txt', 'inc.txt', 'lfs.txt']) writeFileSync(join(path, file), 'one\n');
  gitIn(path, ['add', '.']);
  gitIn(path, ['commit', '-q', '-m', 'inner']);
}

/**
 * The outer `.gitmodules`: no submodule change ignored, recursive fetches, a URL running a program, and with
 * `updateCommand` an `update = !command` (git refuses that value wherever it reads it, so it is planted in
 * one round of calls and left out of the next, to let the commit go through).
 */
function writeGitmodules(updateCommand: boolean): void {
  const update = updateCommand ? `\tupdate = !${program('gitmodules', 'update')}\n` : '';
  writeFileSync(
    join(repo, '.gitmodules'),
    `[submodule "sub"]\n\tpath = sub\n\turl = ${join(directory.path, 'submodule-source')}\n` +
      `\tignore = none\n\tfetchRecurseSubmodules = true\n${update}` +
      `[submodule "nested"]\n\tpath = nested\n\turl = ext::${program('gitmodules', 'url')}\n` +
      `\tignore = none\n${update}`,
  );
}

function markersLeft(): string[] {
  return readdirSync(markers).sort();
}

function toolbox(): ToolBox {
  return gitToolbox({ workDir: repo, settings: toolsSettings().git });
}

/** Every git tool, with paths into each planted repository. */
const everyCall: [string, Record<string, unknown>][] = [
  ['git_status', {}],
  ['git_diff', {}],
  ['git_diff', { staged: true }],
  ['git_diff', { paths: ['sub', 'nested', 'elsewhere', 'linked'] }],
  ['git_log', {}],
  ['git_log', { paths: ['sub'] }],
  // Nothing of the outer repository staged: git commit reports the status, submodules included.
  ['git_commit', { message: 'Nothing staged' }],
  ['git_add', { paths: ['a.txt', 'nested', 'elsewhere', 'linked', 'sub'] }],
  ['git_add', { paths: ['sub/file.txt'] }],
  ['git_add', { paths: ['nested/inc.txt', 'linked/lfs.txt'] }],
  ['git_status', {}],
  ['git_diff', { staged: true }],
  ['git_diff', { staged: true, paths: ['sub', 'nested'] }],
  ['git_commit', { message: 'Nested repositories' }],
  ['git_log', { paths: ['nested', 'sub'] }],
  ['git_diff', {}],
  ['git_status', {}],
  ['git_commit', { message: 'Nothing staged again' }],
];

describe('git: repositories inside the work tree are never entered', () => {
  beforeEach(() => {
    repo = join(directory.path, 'repo');
    markers = join(directory.path, 'markers');
    scripts = join(directory.path, 'scripts');
    mkdirSync(markers);
    mkdirSync(scripts);
    committedRepository(repo);
    // (b) a real submodule, its git directory in the outer .git/modules.
    const source = join(directory.path, 'submodule-source');
    committedRepository(source);
    gitIn(repo, ['submodule', 'add', '-q', source, 'sub']);
    gitIn(repo, ['commit', '-q', '-m', 'add the submodule']);
    // (a) a repository made with git init in a subdirectory.
    committedRepository(join(repo, 'nested'));
    // (c) a .git file pointing to a repository outside the work tree.
    committedRepository(join(repo, 'elsewhere'), join(directory.path, 'outside.git'));
    // (d) a .git that is a symbolic link to a repository outside the work tree.
    const linkedTarget = join(directory.path, 'linked-target');
    committedRepository(linkedTarget);
    mkdirSync(join(repo, 'linked'));
    symlinkSync(join(linkedTarget, '.git'), join(repo, 'linked', '.git'));
    for (const file of ['file.txt', 'inc.txt', 'lfs.txt']) writeFileSync(join(repo, 'linked', file), 'one\n');

    plantConfig('sub', join(repo, '.git', 'modules', 'sub'));
    plantConfig('nested', join(repo, 'nested', '.git'));
    plantConfig('elsewhere', join(directory.path, 'outside.git'));
    plantConfig('linked', join(linkedTarget, '.git'));
    for (const worktree of ['sub', 'nested', 'elsewhere', 'linked']) plantWorkTree(join(repo, worktree));
    // The outer repository: its configuration asks for recursion everywhere, .gitmodules names programs
    // and asks that no submodule change be ignored.
    for (const [key, value] of [
      ['submodule.recurse', 'true'],
      ['status.submoduleSummary', 'true'],
      ['diff.submodule', 'diff'],
      ['diff.ignoreSubmodules', 'none'],
      ['submodule.sub.ignore', 'none'],
    ] as const) {
      gitIn(repo, ['config', key, value]);
    }
    writeGitmodules(true);
    writeFileSync(join(repo, 'a.txt'), 'a\n');
  });

  it('plants every program-valued setting in a nested repository, a submodule, a .git file and a .git link: no program runs', async () => {
    const git = toolbox();
    const outcomes: string[] = [];
    const callEvery = async (round: number) => {
      for (const [index, [name, input]] of everyCall.entries()) {
        const context = toolContext({ idempotencyKey: `tool:run_x:${round}${index}:0` });
        const outcome = await callTool(git, name, input, context);
        outcomes.push(
          `${name} ${JSON.stringify(input)}: ${outcome.isError ? 'error' : 'ok'}: ${outcome.content}`,
        );
      }
    };
    await callEvery(1);
    writeGitmodules(false);
    await callEvery(2);
    expect(markersLeft(), outcomes.join('\n')).toEqual([]);
    // The calls did run: git answered each, and the commits of staged nested repositories went through.
    const committed = outcomes.filter((line) =>
      line.startsWith('git_commit {"message":"Nested repositories"}: ok'),
    );
    expect(committed, outcomes.join('\n')).toHaveLength(1);
    expect(outcomes.filter((line) => line.startsWith('git_status {}: ok'))).toHaveLength(
      everyCall.filter(([name]) => name === 'git_status').length * 2,
    );
  });

  it('the tools keep working: nested repositories show as the commits recorded for them, their work trees unread', async () => {
    writeGitmodules(false);
    const git = toolbox();
    const status = await callOk(git, 'git_status', {});
    expect(status).toContain('?? a.txt');
    expect(status).toContain('?? nested/');
    // The submodule's work tree has changed and untracked files: not looked at, so not reported.
    expect(status).not.toMatch(/^ [mM?] sub$/m);
    await callOk(git, 'git_add', { paths: ['a.txt', 'nested'] });
    const staged = await callOk(git, 'git_status', {});
    expect(staged).toContain('A  a.txt');
    expect(staged).toContain('A  nested');
    const diff = await callOk(git, 'git_diff', { staged: true });
    expect(diff).toContain('+a');
    expect(diff).toContain('new file mode 160000');
    const commit = await callOk(git, 'git_commit', { message: 'Add a' });
    expect(commit.subject).toBe('Add a');
    expect(await callOk(git, 'git_log', {})).toContain('Add a');
    expect(
      await callError(git, 'git_commit', { message: 'Again' }, toolContext({ idempotencyKey: 'k2' })),
    ).toContain('nothing is staged for the commit; stage files with git_add first');
    expect(markersLeft()).toEqual([]);
  });

  it('an update command in .gitmodules neither runs nor stops the tools', async () => {
    const git = toolbox();
    await callOk(git, 'git_add', { paths: ['a.txt', 'nested'] });
    expect(await callOk(git, 'git_status', {})).toContain('A  nested');
    expect(await callOk(git, 'git_diff', { staged: true })).toContain('new file mode 160000');
    expect((await callOk(git, 'git_commit', { message: 'Add a' })).subject).toBe('Add a');
    expect(await callOk(git, 'git_log', {})).toContain('Add a');
    expect(markersLeft()).toEqual([]);
  });
  it('a .git at the top that is a gitdir: file or a link to a planted repository is refused by every tool', async () => {
    const planted = join(directory.path, 'planted.git');
    gitIn(directory.path, ['init', '-q', '--bare', planted]);
    plantConfig('root', planted);
    plantWorkTree(repo);
    const git = toolbox();
    const gitDir = join(repo, '.git');
    const moved = join(directory.path, 'moved.git');
    renameSync(gitDir, moved);
    for (const plant of [
      () => writeFileSync(gitDir, `gitdir: ${planted}\n`),
      () => symlinkSync(planted, gitDir),
    ]) {
      rmSync(gitDir, { force: true });
      plant();
      for (const [name, input] of everyCall) {
        const outcome = await callTool(git, name, input);
        expect(outcome.isError).toBe(true);
        expect(outcome.content).toContain('must be the top directory of a git repository');
      }
    }
    expect(markersLeft()).toEqual([]);
  });
});
