import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { type CliProcess, type CliWorld, createWorld, runCli, spawnCli } from './cli-fixture.js';

const script = { replies: [{ text: 'Still here.' }] };

let redis: OwnRedis | undefined;
let redisDir: string | undefined;
let world: CliWorld | undefined;
const devs: CliProcess[] = [];
afterEach(async () => {
  for (const dev of devs.splice(0)) {
    if (dev.child.exitCode === null && dev.child.signalCode === null) {
      dev.child.kill('SIGINT');
      await Promise.race([dev.exited, sleep(15_000)]);
    }
    await dev.kill();
  }
  await world?.close();
  await redis?.stop();
  if (redisDir) rmSync(redisDir, { recursive: true, force: true });
  world = undefined;
  redis = undefined;
  redisDir = undefined;
});

/** The lines a process printed after the banner that ends with "Ctrl-C stops.". */
function logLines(dev: CliProcess): string[] {
  const [, after = ''] = dev.stdout().split('Ctrl-C stops.\n');
  return after.split('\n').filter((line) => line !== '');
}

describe('ratchet dev through a Redis outage', () => {
  it('prints one short line when Redis goes, none while it stays away, and "Redis is back" (JSON when not told)', async () => {
    redisDir = mkdtempSync(join(tmpdir(), 'ratchet-outage-'));
    redis = await startRedisServer({ dir: redisDir });
    const { port } = redis;
    world = createWorld({ script, redisUrl: redis.url });
    const start = (env: NodeJS.ProcessEnv) => {
      const dev = spawnCli(['dev', '--config', world?.configPath ?? '', '--port', '0'], {
        cwd: world?.dir,
        env,
      });
      devs.push(dev);
      return dev;
    };
    // Its stdout is a pipe either way: one is told to log as at a terminal, the other logs JSON (the default).
    const pretty = start({ RATCHET_LOG_FORMAT: 'pretty' });
    const json = start({});
    await pretty.waitFor('Ctrl-C stops.');
    await json.waitFor('Ctrl-C stops.');

    // Redis goes away for a few seconds (SIGKILLed by its pid: the connections see a reset, on a read or on a write in flight,
    // then refusals), then comes back on the same port.
    await redis.stop();
    await pretty.waitFor('Redis is unreachable');
    await json.waitFor('Redis is unreachable');
    await sleep(4_000);
    redis = await startRedisServer({ dir: redisDir, port });
    await pretty.waitFor('Redis is back', 30_000);
    await json.waitFor('Redis is back', 30_000);

    const prettyLines = logLines(pretty);
    expect(prettyLines, prettyLines.join('\n')).toHaveLength(2);
    expect(prettyLines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\] WARN: Redis is unreachable \(((?:read|write) (?:ECONNRESET|EPIPE)|connect ECONNREFUSED 127\.0\.0\.1:\d+)\): retrying; steps wait until it is back$/,
    );
    expect(prettyLines[1]).toMatch(
      /^\[\d\d:\d\d:\d\d\] WARN: Redis is back \(unreachable for \d+\.\d s\) \(down_ms=\d+, errors=\d+\)$/,
    );
    expect(pretty.stderr()).toBe('');

    const jsonLines = logLines(json);
    expect(jsonLines).toHaveLength(2);
    const records = jsonLines.map(
      (line) => JSON.parse(line) as { level: number; msg: string; down_ms?: number },
    );
    expect(records[0]?.msg).toMatch(
      /^Redis is unreachable \(((?:read|write) (?:ECONNRESET|EPIPE)|connect ECONNREFUSED)/,
    );
    expect(records[1]?.msg).toMatch(/^Redis is back/);
    expect(records[1]?.down_ms).toBeGreaterThanOrEqual(4_000);
    expect(json.stderr()).toBe('');

    // The workers took up their work again: a run through one of the APIs completes.
    const url = /API on (http:\/\/127\.0\.0\.1:\d+)/.exec(pretty.stdout())?.[1] ?? '';
    const run = await runCli(['run', '--url', url, 'are you there?']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('answer: Still here.');
  });
});
