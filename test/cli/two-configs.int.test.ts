import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { freePort, type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { deleteKeys } from '../helpers/harness.js';
import { type CliProcess, repoRoot, runCli, spawnCli } from './cli-fixture.js';

const demoConfig = join(repoRoot, 'config/demo.yaml');
const teamConfig = join(repoRoot, 'config/team.yaml');

let redis: OwnRedis | undefined;
let prefix: string | undefined;
const processes: CliProcess[] = [];
afterEach(async () => {
  for (const started of processes.splice(0)) {
    if (started.child.exitCode === null && started.child.signalCode === null) {
      started.child.kill('SIGINT');
      await Promise.race([started.exited, sleep(15_000)]);
    }
    await started.kill();
  }
  await redis?.stop();
  redis = undefined;
  if (prefix) {
    const connection = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'test' });
    await deleteKeys(connection, prefix);
    await closeRedis(connection);
    prefix = undefined;
  }
});

function start(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const started = spawnCli(args, { env });
  processes.push(started);
  return started;
}

describe('two example configs on one Redis', () => {
  it('ratchet run --config config/team.yaml completes while ratchet dev runs the demo (as the README has them)', async () => {
    // A Redis of its own: the configs' own prefixes are used as written (RATCHET_PREFIX empty: the default).
    redis = await startRedisServer();
    const env = { REDIS_URL: redis.url, RATCHET_PREFIX: '' };
    const dev = start(['dev', '--port', '0'], env);
    await dev.waitFor('Ctrl-C stops.');
    expect(dev.stdout()).toContain(`config ${demoConfig}`);

    const team = await runCli(['run', '--config', teamConfig, 'Write about owls'], { env });
    expect(team.stderr).toBe('');
    expect(team.code).toBe(0);
    expect(team.stdout).toContain('answer: Done: the newsroom wrote it, and the critic approved it.');

    // And the demo's worker still serves the demo.
    const url = /API on (http:\/\/127\.0\.0\.1:\d+)/.exec(dev.stdout())?.[1] ?? '';
    const demo = await runCli(['run', '--url', url, 'What is 17 × 23 + 5?'], { env, stdin: '1\n' });
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain('answer: 17 × 23 = 391, plus 5 is 396');
  });

  it('a step taken by a worker of another config on the same prefix waits for a worker that has it, and ratchet status says what it waits for', async () => {
    prefix = `t-${randomBytes(6).toString('hex')}`;
    const env = { REDIS_URL: inject('redisUrl'), RATCHET_PREFIX: prefix };
    // The team's API, and only the demo's worker: the editor's first step can only go to that worker.
    const port = await freePort();
    start(['api', '--config', teamConfig, '--port', String(port)], env);
    start(['worker', '--config', demoConfig], env);
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(`${url}/readyz`).then(
        (response) => response.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error('the API did not start');
      await sleep(100);
    }

    // Not failed (decision 0031): the demo's worker hands the step back; with no live worker that has the
    // editor, after worker.capability_wait_s (60 s in the example config) the run waits for one.
    const accepted = (await (
      await fetch(`${url}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Write about owls' }),
      })
    ).json()) as { run_id: string };
    const waitUntil = Date.now() + 120_000;
    for (;;) {
      const run = (await (await fetch(`${url}/v1/runs/${accepted.run_id}`)).json()) as { status: string };
      if (run.status === 'waiting_for_worker') break;
      expect(run.status).not.toBe('failed');
      if (Date.now() > waitUntil) throw new Error(`the run is still ${run.status}`);
      await sleep(500);
    }
    const status = await runCli(['status', accepted.run_id, '--url', url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('  status      waiting_for_worker');
    // What the editor's recorded definition needs that the other config's worker lacks (decision 0030):
    // its provider or toolboxes, named by kind.
    expect(status.stdout).toMatch(
      / {2}waiting for a worker with [a-z_]+:[\w.-]+(, [a-z_]+:[\w.-]+)* \(since /,
    );
  }, 180_000);
});
