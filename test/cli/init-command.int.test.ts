import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { selectAgentSkills } from '../../src/skills/index.js';
import { deleteKeys } from '../helpers/harness.js';
import { runCli } from './cli-fixture.js';

// `ratchet init` writes the starter dev team; the real CLI then runs a task against it with its scripted
// models (an API and a worker in the CLI's process, on the test's Redis); `ratchet contract check` checks a
// file against its review contract for CI.
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-init-'));
  dirs.push(dir);
  return dir;
}

const starterFiles = [
  'AGENTS.md',
  '.ratchet/skills/code-review/SKILL.md',
  '.ratchet/skills/delegation/SKILL.md',
  '.ratchet/skills/implementation/SKILL.md',
  '.ratchet/skills/planning/SKILL.md',
  'ratchet.yaml',
  'README.md',
];

describe('ratchet init', () => {
  it('writes a dev team with a skill per role that runs a task with its scripted models', async () => {
    const cwd = tempDir();
    const init = await runCli(['init', 'team'], { cwd });
    expect(init.code, init.stderr).toBe(0);
    for (const file of starterFiles) {
      expect(existsSync(join(cwd, 'team', file)), file).toBe(true);
      expect(init.stdout).toContain(`  ${file}\n`);
    }
    expect(init.stdout).toContain('ratchet.yaml "Add a greeting to hello.txt"');

    // Each role gets its own skill (a worker adds it to the role's instructions).
    const loaded = loadConfig(join(cwd, 'team/ratchet.yaml'), { env: { ...process.env } });
    const skills = selectAgentSkills(loaded.config, loaded.configDir);
    expect(
      Object.fromEntries([...skills].map(([agent, own]) => [agent, own.map((skill) => skill.name)])),
    ).toEqual({
      lead: ['delegation'],
      planner: ['planning'],
      developer: ['implementation'],
      reviewer: ['code-review'],
    });

    const prefix = `t-${randomBytes(6).toString('hex')}`;
    const redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'init-test' });
    cleanups.push(async () => {
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
    });
    const run = await runCli(['run', '--config', 'ratchet.yaml', 'Add a greeting to hello.txt'], {
      cwd: join(cwd, 'team'),
      env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix },
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('planner starts');
    // The developer's file tools work in the project: it listed the folder init wrote.
    expect(run.stdout).toMatch(/list_directory → .*AGENTS\.md/);
    expect(run.stdout).toContain('{"verdict": "approve"');
    expect(run.stdout).toContain(
      'answer: Done: the planner planned it, the developer made the change, and the reviewer approved it.',
    );
  }, 180_000);

  it('refuses to overwrite: names the files in the way and writes none', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, '.ratchet/skills/planning'), { recursive: true });
    writeFileSync(join(cwd, 'README.md'), 'my own readme');
    writeFileSync(join(cwd, '.ratchet/skills/planning/SKILL.md'), 'my own skill');
    const init = await runCli(['init'], { cwd });
    expect(init.code).toBe(1);
    expect(init.stderr).toContain('.ratchet/skills/planning/SKILL.md, README.md exist already');
    expect(init.stderr).toContain('nothing was written');
    expect(readFileSync(join(cwd, 'README.md'), 'utf8')).toBe('my own readme');
    expect(existsSync(join(cwd, 'ratchet.yaml'))).toBe(false);
    expect(existsSync(join(cwd, 'AGENTS.md'))).toBe(false);
  }, 60_000);
});

describe('ratchet contract check', () => {
  it('exits 0 for a valid file, 1 with each error at its path, 2 when it cannot check', async () => {
    const cwd = tempDir();
    expect((await runCli(['init'], { cwd })).code).toBe(0);
    writeFileSync(join(cwd, 'good.json'), '{"verdict": "approve", "comments": []}');
    writeFileSync(join(cwd, 'bad.json'), '{"verdict": "maybe", "comments": "none"}');
    const good = await runCli(['contract', 'check', 'review', 'good.json', '--config', 'ratchet.yaml'], {
      cwd,
    });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe('good.json: valid against contract "review" (schema_version 1)\n');
    const bad = await runCli(['contract', 'check', 'review', 'bad.json', '--config', 'ratchet.yaml'], {
      cwd,
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe(
      [
        'bad.json: breaks contract "review" (schema_version 1), 2 errors:',
        '  $.comments: expected array, got string (wrong_type)',
        '  $.verdict: must be one of "approve", "request_changes" (enum)',
        '',
      ].join('\n'),
    );
    const unknown = await runCli(['contract', 'check', 'reveiw', 'bad.json', '--config', 'ratchet.yaml'], {
      cwd,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no contract named "reveiw" (its contracts: review)');
    const missing = await runCli(['contract', 'check', 'review', 'nope.json', '--config', 'ratchet.yaml'], {
      cwd,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read nope.json');
  }, 120_000);
});
