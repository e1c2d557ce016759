import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { filesystemToolbox } from '../../src/tools/builtin/filesystem/filesystem-toolbox.js';
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

const directory = useTemporaryDirectory('git');
let repo: string;
let git: ToolBox;

function toolbox(workDir: string, section: Record<string, unknown> = {}): ToolBox {
  return gitToolbox({ workDir, settings: toolsSettings({ git: section }).git });
}

/** What the test's own git commands need to commit, whatever the machine's global config says. */
function gitTestEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@localhost',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@localhost',
  };
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

/**
 * A model that can write files tries to get git to run a program of its choosing; the marker file exists
 * only if one ran. Each scenario ends with every git tool called.
 */
describe('git: files a model writes never make git run a program', () => {
  let marker: string;
  /** A config value that runs a program creating the marker (and passes its input through, as filters must). */
  let program: string;

  beforeEach(() => {
    marker = join(directory.path, 'program-ran');
    program = `"touch ${marker} && cat"`;
  });

  /** An executable that creates the marker, for settings git runs without a shell. */
  function markerScript(): string {
    const script = join(directory.path, 'make-marker.sh');
    writeFileSync(script, `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(script, 0o755);
    return script;
  }

  async function callEveryTool(toolbox: ToolBox): Promise<string[]> {
    const calls: [string, unknown][] = [
      ['git_status', {}],
      ['git_add', { paths: ['a.txt'] }],
      ['git_diff', { staged: true }],
      ['git_diff', {}],
      ['git_commit', { message: 'Try' }],
      ['git_log', {}],
    ];
    const texts: string[] = [];
    for (const [name, input] of calls) {
      const outcome = await callTool(toolbox, name, input);
      texts.push(outcome.content);
    }
    return texts;
  }

  it('a bare repository planted with write_file in a work dir without .git is refused, never used', async () => {
    const workspace = join(directory.path, 'workspace');
    const files = filesystemToolbox({ workspace, settings: toolsSettings().filesystem });
    const planted: Record<string, string> = {
      HEAD: 'ref: refs/heads/main\n',
      config:
        '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n' +
        `\tfsmonitor = ${program}\n\tpager = ${program}\n\thooksPath = hooks\n` +
        `[filter "x"]\n\tclean = ${program}\n\tsmudge = ${program}\n` +
        `[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ${program}\n`,
      'objects/info/keep': '',
      'refs/heads/keep': '',
      '.gitattributes': '* filter=x\n',
      'a.txt': 'a\n',
    };
    for (const [path, content] of Object.entries(planted)) {
      await callOk(files, 'write_file', { path, content });
    }
    const results = await callEveryTool(toolbox(workspace));
    expect(existsSync(marker)).toBe(false);
    for (const text of results) {
      expect(text).toContain(
        `tools.git.work_dir "${workspace}" must be the top directory of a git repository`,
      );
      expect(text).toContain('run git init there');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('filter drivers of the repository config do not run, whatever .gitattributes assigns them to', async () => {
    // The repository config is not writable by tools; a driver configured there is still not run for
    // files the model chose, and required ones fail loudly instead of storing unfiltered content.
    execFileSync('git', ['config', 'filter.clean-one.clean', `touch ${marker} && cat`], { cwd: repo });
    execFileSync('git', ['config', 'filter.smudge-one.smudge', `touch ${marker} && cat`], { cwd: repo });
    execFileSync('git', ['config', 'filter.process-one.process', `touch ${marker}`], { cwd: repo });
    writeFileSync(
      join(repo, '.gitattributes'),
      '* filter=smudge-one\na.txt filter=clean-one\nb.txt filter=process-one\n',
    );
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    writeFileSync(join(repo, 'b.txt'), 'b\n');
    await callOk(git, 'git_add', { paths: ['a.txt', 'b.txt', '.gitattributes'] });
    await callOk(git, 'git_commit', { message: 'Filtered files' });
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    expect(await callOk(git, 'git_status', {})).toContain(' M a.txt');
    expect(await callOk(git, 'git_diff', {})).toContain('+changed');
    expect(existsSync(marker)).toBe(false);
  });

  it('a repository config that includes another file is refused', async () => {
    // The included file is one the model could write: it defines a filter and an fsmonitor.
    writeFileSync(
      join(repo, 'included.cfg'),
      `[filter "x"]\n\tclean = ${program}\n[core]\n\tfsmonitor = ${program}\n`,
    );
    writeFileSync(join(repo, '.gitattributes'), '* filter=x\n');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    execFileSync('git', ['config', 'include.path', '../included.cfg'], { cwd: repo });
    const results = await callEveryTool(git);
    expect(existsSync(marker)).toBe(false);
    for (const text of results) expect(text).toContain('sets include.path');
    execFileSync('git', ['config', '--unset', 'include.path'], { cwd: repo });
    execFileSync('git', ['config', 'includeIf.gitdir:/.path', '../included.cfg'], { cwd: repo });
    expect(await callError(git, 'git_status', {})).toContain('sets includeif.gitdir:/.path');
    expect(existsSync(marker)).toBe(false);
  });

  it('a repository config that defines a hook by configuration (hook.<name>.command) is refused', async () => {
    // git 2.39 ignores these keys; newer git runs them, and core.hooksPath does not switch them off.
    execFileSync('git', ['config', 'hook.planted.command', program], { cwd: repo });
    execFileSync('git', ['config', 'hook.planted.event', 'pre-commit'], { cwd: repo });
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const results = await callEveryTool(git);
    expect(existsSync(marker)).toBe(false);
    for (const text of results) expect(text).toContain('sets hook.planted.');
  });

  it('a global config in the home directory (e.g. a workspace that is HOME) is not read', async () => {
    writeFileSync(join(directory.path, '.gitconfig'), `[filter "x"]\n\tclean = ${program}\n`);
    writeFileSync(join(repo, '.gitattributes'), '* filter=x\n');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const home = process.env.HOME;
    process.env.HOME = directory.path;
    try {
      const results = await callEveryTool(git);
      expect(results[4]).toContain('"commit"');
    } finally {
      process.env.HOME = home;
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('a partial clone never fetches a missing object from its promisor remote, whatever protocol the config allows', async () => {
    // A model that runs commands can write .git: it makes the repository a partial clone whose promisor
    // remote is a local path served by a planted upload-pack, allows the file protocol, and stages a file
    // whose blob is missing, so that showing its diff would fetch the blob.
    const server = join(directory.path, 'server');
    execFileSync('git', ['init', '-q', server]);
    const blob = execFileSync('git', ['hash-object', '--stdin'], {
      cwd: repo,
      input: 'secret\n',
      encoding: 'utf8',
    });
    execFileSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob.trim()},a.txt`], {
      cwd: repo,
    });
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    for (const [key, value] of [
      ['core.repositoryformatversion', '1'],
      ['extensions.partialClone', 'origin'],
      ['remote.origin.url', server],
      ['remote.origin.promisor', 'true'],
      ['remote.origin.uploadpack', markerScript()],
      ['protocol.file.allow', 'always'],
      ['protocol.ext.allow', 'always'],
    ]) {
      execFileSync('git', ['config', key as string, value as string], { cwd: repo });
    }
    await callTool(git, 'git_diff', {});
    await callTool(git, 'git_diff', { staged: true });
    await callEveryTool(git);
    expect(existsSync(marker)).toBe(false);
  });

  it('program-valued settings of the repository config stay unused: signature checks, pager, editor', async () => {
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'first'], { cwd: repo, env: gitTestEnv() });
    // A commit carrying a signature header: git log --show-signature hands it to gpg.program.
    const unsigned = execFileSync('git', ['cat-file', 'commit', 'HEAD'], { cwd: repo, encoding: 'utf8' });
    const signed = unsigned.replace(
      /^(committer .*)$/m,
      '$1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----',
    );
    const hash = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: repo,
      input: signed,
      encoding: 'utf8',
    }).trim();
    execFileSync('git', ['update-ref', 'HEAD', hash], { cwd: repo });
    for (const [key, value] of [
      ['log.showSignature', 'true'],
      // Run without a shell: it must be a program file.
      ['gpg.program', markerScript()],
      ['core.pager', `touch ${marker}`],
      ['pager.log', `touch ${marker}`],
      ['core.editor', `touch ${marker}`],
      ['core.fsmonitor', `touch ${marker}`],
      ['diff.external', `touch ${marker}`],
      ['credential.helper', `!touch ${marker}`],
    ]) {
      execFileSync('git', ['config', key as string, value as string], { cwd: repo });
    }
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const results = await callEveryTool(git);
    expect(results[5]).toContain('Try');
    expect(results[5]).toContain('first');
    expect(existsSync(marker)).toBe(false);
  });
});
