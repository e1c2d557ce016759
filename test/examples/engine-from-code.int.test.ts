import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, redisAnswers } from '../helpers/find-redis.js';
import { runExample } from '../helpers/run-example.js';

const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Runs the example as a user would, from a directory of its own (where it keeps a Redis it starts). */
async function runInOwnDirectory(env: Record<string, string>) {
  const cwd = mkdtempSync(join(tmpdir(), 'ratchet-example-'));
  directories.push(cwd);
  // Before the fix the example never ended without a Redis: the test's own timeout is the failure then.
  return runExample('engine-from-code.ts', { cwd, env });
}

describe('examples/engine-from-code.ts when no Redis answers', () => {
  it('starts redis-server from the PATH for a loopback address, completes the run and stops it again', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const { code, stdout, stderr } = await runInOwnDirectory({ REDIS_URL: url });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`started redis-server on port ${port}`);
    expect(stdout).toContain('completed 17 × 23 = 391, plus 5 is 396; our motto has 5 words.\n');
    expect(await redisAnswers(url)).toBe(false);
  });

  it('fails at once, saying how to start Redis, when redis-server is not on the PATH', async () => {
    const port = await freePort();
    const { code, stdout, stderr } = await runInOwnDirectory({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      PATH: '/nonexistent',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('redis-server is not on the PATH');
  });
});
