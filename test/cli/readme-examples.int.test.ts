import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { deleteKeys } from '../helpers/harness.js';
import { runExample } from '../helpers/run-example.js';
import { runCli } from './cli-fixture.js';
import { expectPrintedAsInReadme } from './readme-output.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const prefix = `t-${randomBytes(6).toString('hex')}`;

afterAll(async () => {
  const redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'test' });
  await deleteKeys(redis, prefix);
  await closeRedis(redis);
});

describe('config/team.yaml (the README example)', () => {
  it('runs as written: the editor delegates to the newsroom team, whose members take turns', async () => {
    const { code, stdout, stderr } = await runCli(
      ['run', '--config', join(repoRoot, 'config/team.yaml'), 'Write about owls'],
      { env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix } },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const at = (start: string) => lines.findIndex((line) => line.startsWith(start));
    // The tree, drawn live: the team one level below the editor, its members two levels below.
    expect(at('▶ editor starts: Write about owls')).toBeGreaterThan(0);
    expect(at('    ↳ 👥 newsroom starts:')).toBeGreaterThan(at('  🔧 delegate_to_agent'));
    expect(at('        ↳ 🔎 researcher starts:')).toBeGreaterThan(at('    ↳ 👥 newsroom starts:'));
    expect(at('        ✍️ writer: Owls are')).toBeGreaterThan(at('        🔎 researcher: Facts:'));
    expect(at('        🧐 critic: APPROVED')).toBeGreaterThan(at('        ✍️ writer: Owls are'));
    expect(at('  ✓ delegate_to_agent → APPROVED: accurate and clear.')).toBeGreaterThan(
      at('        🧐 critic'),
    );
    expect(stdout.endsWith('\nanswer: Done: the newsroom wrote it, and the critic approved it.\n')).toBe(
      true,
    );
    expectPrintedAsInReadme('config/team.yaml "Write about owls"', stdout);
  });
});

describe('config/supervisor.yaml (the README example)', () => {
  it('runs as written: the lead declares two sub-goals, delegates both, and finishes on its own', async () => {
    const { code, stdout, stderr } = await runCli(
      ['run', '--config', join(repoRoot, 'config/supervisor.yaml'), 'Compare owls and hawks'],
      { env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix } },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const at = (start: string) => lines.findIndex((line) => line.startsWith(start));
    expect(at('▶ lead starts: Compare owls and hawks')).toBeGreaterThan(0);
    expect(at('    [ ] owls: how owls hunt')).toBeGreaterThan(
      at('  ⏳ [░░░░░░░░░░░░░░░░░░░░░░░░]   0% 0 of 2'),
    );
    expect(at('  ⏳ [████████████████████████] 100% 2 of 2 sub-goals completed')).toBeGreaterThan(
      at('    ↳ 🔎 researcher starts: How do hawks hunt?'),
    );
    expect(at('    [✓] hawks: how hawks hunt')).toBeGreaterThan(at('    [✓] owls: how owls hunt'));
    expect(at('✔ completed after 3 iterations')).toBeGreaterThan(0);
    expect(stdout).toContain('\nanswer: All 2 sub-goals are completed.');
    expectPrintedAsInReadme('config/supervisor.yaml "Compare owls and hawks"', stdout);
  });
});

describe('config/long-task.yaml (the README example)', () => {
  it('runs as written: the reader compacts its context, takes stock every four iterations, and finishes', async () => {
    const { code, stdout, stderr } = await runCli(
      ['run', '--config', join(repoRoot, 'config/long-task.yaml'), 'Review the docs'],
      { env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix } },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const at = (start: string) => lines.findIndex((line) => line.startsWith(start));
    expect(at('▶ reader starts: Review the docs')).toBeGreaterThan(0);
    expect(at('  ⏳ checkpoint after 4 iterations')).toBeGreaterThan(at('  🔧 read_file({"path":"api.md"'));
    expect(at('  🗜 context compacted (threshold reached): ')).toBeGreaterThan(
      at('  🔧 read_file({"path":"security.md"'),
    );
    expect(at('✔ completed after 9 iterations')).toBeGreaterThan(0);
    expect(stdout).toContain('\nanswer: Reviewed five documents (three of them twice)');
    expectPrintedAsInReadme('config/long-task.yaml "Review the docs"', stdout);
  });
});

describe('examples/engine-from-code.ts (the README example)', () => {
  it('runs as written: a worker and an engine in one process complete the demo run, answering its question', async () => {
    const { code, stdout, stderr } = await runExample('engine-from-code.ts', {
      cwd: repoRoot,
      env: { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(
      'completed 17 × 23 = 391, plus 5 is 396; our motto has 5 words.\n10 messages, 27 events\n',
    );
  });
});
