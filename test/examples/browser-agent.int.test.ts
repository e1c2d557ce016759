import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeWithBrowser } from '../helpers/browser.js';
import { freePort, redisAnswers } from '../helpers/find-redis.js';

const example = resolve(import.meta.dirname, '../../examples/browser-agent.ts');
const tsx = import.meta.resolve('tsx');
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
    const child = spawn(process.execPath, ['--import', tsx, example], {
      cwd,
      env: { ...process.env, REDIS_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.once('exit', done));
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
