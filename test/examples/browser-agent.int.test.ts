import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeWithBrowser } from '../helpers/browser.js';
import { freePort, redisAnswers } from '../helpers/find-redis.js';
import { runExample } from '../helpers/run-example.js';

const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describeWithBrowser('examples/browser-agent.ts', () => {
  it('runs as written: the scripted agent fills the page’s form, reads the greeting and takes a screenshot', async () => {
    // A Redis of its own (the example starts redis-server for a loopback address nobody answers on).
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const cwd = mkdtempSync(join(tmpdir(), 'ratchet-example-'));
    directories.push(cwd);
    const { code, stdout, stderr } = await runExample('browser-agent.ts', { cwd, env: { REDIS_URL: url } });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('completed The page greeted Ada.\n');
    expect(stdout).toMatch(
      /read: \{"url":"http:\/\/127\.0\.0\.1:\d+\/greet\?name=Ada","title":"Greeting","content":"Hello, Ada!"\}\n/,
    );
    expect(stdout).toMatch(/screenshot: image\/png, \d+ bytes\n/);
    expect(await redisAnswers(url)).toBe(false);
  });
});
