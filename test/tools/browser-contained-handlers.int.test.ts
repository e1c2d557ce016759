import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { spawnNodeProcess } from '../../src/testing/worker-process.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { waitForExit } from '../helpers/crash-scenario.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const fixture = resolve(repoRoot, 'test/fixtures/throwing-browser-handlers.ts');

/** Runs the fixture in a process of its own (real Chromium, real Playwright dispatch) and waits for its end. */
async function runFixture(mode: 'contained' | 'raw') {
  const child = spawnNodeProcess({
    args: ['--import', 'tsx', fixture, ...(mode === 'raw' ? ['raw'] : [])],
    cwd: repoRoot,
    env: { ...process.env },
  });
  const exit = await waitForExit(child, 60_000);
  return { ...exit, output: child.output() };
}

describeWithBrowser('browser handlers that throw', () => {
  it('a route, WebSocket or event handler throwing anything (an Error, a string, undefined, a symbol ...) does not end the process', async () => {
    const contained = await runFixture('contained');
    expect(contained.code, contained.output).toBe(0);
    // Eight kinds of value, thrown and rejected, by routes, sockets, page events and an emitter.
    expect(contained.output).toMatch(/survived (\d+) failures of \1 calls/);
    expect(Number(contained.output.match(/survived (\d+)/)?.[1])).toBeGreaterThanOrEqual(24);
    // The same handlers unwrapped end the process: what containment is for.
    const raw = await runFixture('raw');
    expect(raw.code, raw.output).not.toBe(0);
  });
});
