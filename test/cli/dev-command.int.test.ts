import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freePort, redisAnswers } from '../helpers/find-redis.js';
import { type CliProcess, type CliWorld, createWorld, invocation, runCli, spawnCli } from './cli-fixture.js';

const script = {
  replies: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Go on?' } }] }, { text: 'Went on.' }],
};

let world: CliWorld | undefined;
let dev: CliProcess | undefined;
afterEach(async () => {
  // A test that failed midway leaves ratchet dev running: Ctrl-C first, so it stops the redis-server it
  // started (a SIGKILL alone would leave that one behind), then kill whatever is left.
  if (dev && dev.child.exitCode === null && dev.child.signalCode === null) {
    dev.child.kill('SIGINT');
    await Promise.race([dev.exited, sleep(15_000)]);
  }
  await dev?.kill();
  await world?.close();
  dev = undefined;
  world = undefined;
});

describe('ratchet dev', () => {
  it('starts redis-server when none answers (data under .ratchet/), serves runs, and stops it all on Ctrl-C', async () => {
    const port = await freePort();
    const redisUrl = `redis://127.0.0.1:${port}`;
    world = createWorld({ script, redisUrl: inject('redisUrl'), urlFromEnv: true });
    dev = spawnCli(['dev', '--config', world.configPath, '--port', '0'], {
      cwd: world.dir,
      env: { REDIS_URL: redisUrl },
    });
    await dev.waitFor(/API on (http:\/\/127\.0\.0\.1:\d+)/);
    const url = /API on (http:\/\/127\.0\.0\.1:\d+)/.exec(dev.stdout())?.[1] ?? '';
    expect(dev.stdout()).toContain(`started redis-server on port ${port}`);
    expect(existsSync(join(world.dir, '.ratchet/redis/redis.log'))).toBe(true);
    expect(await redisAnswers(redisUrl)).toBe(true);
    // The web console, at the URL it prints (a line of its own, written after the API's: wait for it).
    await dev.waitFor(/\nconsole: http:\/\/\S+\/console\n/);
    expect(dev.stdout()).toContain(`\nconsole: ${url}/console\n`);
    // The command it suggests, as the user runs the CLI here (npx ratchet in a checkout).
    await dev.waitFor('Ctrl-C stops.');
    expect(dev.stdout()).toContain(`\ntry:  ${invocation} run --url ${url} "What is 17 × 23 + 5?"\n`);
    const page = await fetch(`${url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('/console/assets/app.js');

    const run = await runCli(['run', '--url', url, 'go'], { stdin: 'sure\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('❓ helper asks: Go on?');
    expect(run.stdout).toContain('answer: Went on.');

    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(await redisAnswers(redisUrl)).toBe(false);
  });

  it('uses the Redis that answers, and starts none', async () => {
    world = createWorld({ script, redisUrl: inject('redisUrl') });
    dev = spawnCli(['dev', '--config', world.configPath, '--port', '0'], { cwd: world.dir });
    await dev.waitFor('API on');
    expect(dev.stdout()).not.toContain('started redis-server');
    expect(existsSync(join(world.dir, '.ratchet'))).toBe(false);
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  });

  it('exits 1 saying how to start Redis when none answers and redis-server is not on the PATH', async () => {
    const port = await freePort();
    world = createWorld({ script, redisUrl: inject('redisUrl'), urlFromEnv: true });
    const { code, stderr } = await runCli(['dev', '--config', world.configPath], {
      cwd: world.dir,
      // node itself is spawned by its path; this PATH holds no redis-server.
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, PATH: world.dir },
    });
    expect(code).toBe(1);
    expect(stderr).toContain(
      `Redis does not answer at redis://127.0.0.1:${port}, and redis-server is not on the PATH.`,
    );
    expect(stderr).toContain('REDIS_URL');
  });

  it('starts no second server when the one at the URL refuses commands (a password is missing)', async () => {
    const port = await freePort();
    const protectedRedis = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--requirepass',
        'secret',
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    );
    try {
      while (!(await redisAnswers(`redis://:secret@127.0.0.1:${port}`))) await sleep(50);
      world = createWorld({ script, redisUrl: inject('redisUrl'), urlFromEnv: true });
      const { code, stderr } = await runCli(['dev', '--config', world.configPath], {
        cwd: world.dir,
        env: { REDIS_URL: `redis://127.0.0.1:${port}` },
      });
      expect(code).toBe(1);
      expect(stderr).toContain(`Redis at redis://127.0.0.1:${port} answers but refuses commands: NOAUTH`);
      expect(existsSync(join(world.dir, '.ratchet'))).toBe(false);
    } finally {
      protectedRedis.kill('SIGKILL');
    }
  });

  it('does not start a redis-server for another machine', async () => {
    world = createWorld({ script, redisUrl: inject('redisUrl'), urlFromEnv: true });
    const { code, stderr } = await runCli(['dev', '--config', world.configPath], {
      cwd: world.dir,
      env: { REDIS_URL: 'redis://192.0.2.1:6379' },
    });
    expect(code).toBe(1);
    expect(stderr).toContain('192.0.2.1 is not this machine');
  });
});
