import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { invocation, repoRoot, runCli } from './cli-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'ratchet-cli-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ratchet config validate', () => {
  it('says "ok" with a summary for a good file, from any working directory', async () => {
    const { code, stdout } = await runCli(['config', 'validate', join(repoRoot, 'config/demo.yaml')], {
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok\nconfig .*config\/demo\.yaml\n/);
    expect(stdout).toContain('assistant: provider scripted, toolboxes utils, max_iterations 8');
    expect(stdout).toContain('entry agent: assistant');
  });

  it('lists every problem of a bad file with its path, and exits 1', async () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(
      path,
      [
        'providers:',
        '  - { name: default, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        '  - { name: a, provider: defualt, toolboxes: [utils, nope] }',
        'worker:',
        '  concurrency: 0',
        'colour: blue',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await runCli(['config', 'validate', path], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('agents[0].provider: unknown provider "defualt" (did you mean "default"?)');
    expect(stderr).toContain('agents[0].toolboxes[1]: unknown toolbox "nope"');
    expect(stderr).toContain('worker.concurrency: must be at least 1');
    expect(stderr).toContain('colour: unknown key');
    expect(stderr).toContain('4 problems');
  });

  it('checks narrowed tool lists and skills too', async () => {
    const path = join(dir, 'skills.yaml');
    writeFileSync(
      path,
      [
        'providers:',
        '  - { name: default, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        '  - { name: a, provider: default, toolboxes: [{ name: utils, tools: [calculat] }], skills: [review] }',
      ].join('\n'),
    );
    const first = await runCli(['config', 'validate', path], { cwd: dir });
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(
      'agents[0].toolboxes[0].tools[0]: unknown tool "calculat" in toolbox "utils" (did you mean "calculate"?)',
    );
    writeFileSync(path, readFileSync(path, 'utf8').replace('calculat]', 'calculate]'));
    const second = await runCli(['config', 'validate', path], { cwd: dir });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('agents[0].skills[0]: unknown skill "review" (no skills in');
  });

  it("checks api.mcp_toolboxes' names as the API does at start, naming the field and the fix", async () => {
    const path = join(dir, 'served.yaml');
    const config = (toolboxes: string) =>
      [
        'providers:',
        '  - { name: default, kind: scripted, model: m, replies: [{ text: hi }] }',
        'agents:',
        '  - { name: a, provider: default }',
        `api: { mcp_toolboxes: { enabled: true, toolboxes: ${toolboxes} } }`,
      ].join('\n');
    writeFileSync(path, config('[search, filesytem, state]'));
    const bad = await runCli(['config', 'validate', path], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /api\.mcp_toolboxes\.toolboxes\[1\]: unknown toolbox "filesytem" \(did you mean "filesystem"\?\): name one that can be served \(.*\bfilesystem\b.*\) or register a toolbox of that name in code \(createToolBox\)/,
    );
    expect(bad.stderr).toContain(
      'api.mcp_toolboxes.toolboxes[2]: "state" works on a session\'s shared data, which only an agent\'s run has: remove it',
    );
    expect(bad.stderr).toContain('2 problems');
    writeFileSync(path, config('[search, filesystem]'));
    const good = await runCli(['config', 'validate', path], { cwd: dir });
    expect(good.stderr).toBe('');
    expect(good.code).toBe(0);
  });

  it('says so when the file cannot be read', async () => {
    const { code, stderr } = await runCli(['config', 'validate', join(dir, 'missing.yaml')], { cwd: dir });
    expect(code).toBe(1);
    expect(stderr).toContain('cannot read the file');
  });
});

describe('usage errors', () => {
  it.each([
    [['deploy'], 'unknown command "deploy"', `Usage: ${invocation} <command> [options]`],
    [['rnus'], 'unknown command "rnus" (did you mean "runs"?)', `Usage: ${invocation} <command> [options]`],
    [['dev', '--bogus'], 'dev: unknown option "--bogus"', `Usage: ${invocation} dev [--config F] [--port N]`],
    [
      ['status', 'run_x', '--tokn', 't'],
      'status: unknown option "--tokn" (did you mean "--token"?)',
      `Usage: ${invocation} status RUN_ID [--url URL] [--token T]`,
    ],
    [
      ['worker', '--concurrency', 'many'],
      '--concurrency: must be a whole number',
      `Usage: ${invocation} worker`,
    ],
    [['run'], 'run: give the task', `Usage: ${invocation} run "<task>"`],
    [
      ['config', 'validate'],
      'config validate: give the config file',
      `Usage: ${invocation} config validate F`,
    ],
    [[], 'no command given', `Usage: ${invocation} <command> [options]`],
  ])('ratchet %j prints the usage and exits 2', async (args, message, usage) => {
    const { code, stdout, stderr } = await runCli(args, { cwd: dir });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
    expect(stderr).toContain(usage);
  });

  it("ratchet <command> --help prints that command's usage, every option it takes, what each means for it", async () => {
    const attach = await runCli(['attach', '--help'], { cwd: dir });
    expect(attach.code).toBe(0);
    expect(attach.stdout).toMatch(
      new RegExp(`^Usage: ${invocation} attach RUN_ID \\[--url URL\\] \\[--token T\\]\\n`),
    );
    expect(attach.stdout).toContain('--token T');

    const run = await runCli(['run', '--help'], { cwd: dir });
    expect(run.stdout).toContain(
      `Usage: ${invocation} run "<task>" [--agent A] [--max-iterations N] [--timeout S] [--session ID [--on-busy P]] [--config F | --url URL [--token T]]\n`,
    );
    expect(run.stdout).toContain(
      "--agent A          the agent (or team) to work on the task (default: the config's entry agent)\n",
    );
    expect(run.stdout).not.toContain("this agent's runs");

    for (const command of ['status', 'answer', 'attach']) {
      const { stdout } = await runCli([command, '--help'], { cwd: dir });
      expect(stdout).toContain(
        '--url URL          the API (default: $RATCHET_URL, else the API the run was started on from',
      );
      expect(stdout).not.toContain('starts an API');
    }
  });

  it('ratchet --help prints the usage and exits 0', async () => {
    const { code, stdout } = await runCli(['--help'], { cwd: dir });
    expect(code).toBe(0);
    expect(stdout).toContain(
      'run "<task>" [--agent A] [--max-iterations N] [--timeout S] [--session ID [--on-busy P]] [--config F | --url URL [--token T]]',
    );
  });

  it('says ratchet where this program is on the PATH as ratchet, npx ratchet where it is not (a checkout, a project)', async () => {
    const bin = join(repoRoot, 'bin/ratchet.mjs');
    const installed = join(dir, 'global/bin');
    const project = join(dir, 'project/node_modules/.bin');
    for (const path of [installed, project]) {
      mkdirSync(path, { recursive: true });
      symlinkSync(bin, join(path, 'ratchet'));
    }
    const usageWith = async (path: string) =>
      (await runCli(['--help'], { cwd: dir, env: { PATH: path } })).stdout.split('\n')[0];
    expect(await usageWith([installed, '/usr/bin', '/bin'].join(delimiter))).toBe(
      'Usage: ratchet <command> [options]',
    );
    // npx and npm run put node_modules/.bin on the PATH of what they start: the user's shell does not have it.
    expect(await usageWith([project, '/usr/bin', '/bin'].join(delimiter))).toBe(
      'Usage: npx ratchet <command> [options]',
    );
    expect(await usageWith(['/usr/bin', '/bin'].join(delimiter))).toBe(
      'Usage: npx ratchet <command> [options]',
    );
  });

  it('refuses a RATCHET_LOG_FORMAT it does not know, at start, in one line (exit 2)', async () => {
    const { code, stderr } = await runCli(['dev'], { cwd: dir, env: { RATCHET_LOG_FORMAT: 'fancy' } });
    expect(code).toBe(2);
    expect(stderr).toBe(
      'ratchet: RATCHET_LOG_FORMAT: must be auto, json, pretty (got "fancy"); unset it for auto\n',
    );
  });

  it('a bad config is refused at start with every problem (exit 2)', async () => {
    const path = join(dir, 'bad-for-dev.yaml');
    writeFileSync(path, 'providers: []\nagents: []\n');
    const { code, stderr } = await runCli(['dev', '--config', path], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr).toContain('providers: define at least one provider');
    expect(stderr).toContain('agents: define at least one agent');
  });
});
