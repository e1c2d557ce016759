import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { type PageServer, shopSite, startPageServer } from '../helpers/browser-pages.js';
import { crashAndTakeOver, waitFor } from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';

let site: PageServer;
let harness: Harness | undefined;

beforeAll(async () => {
  site = await startPageServer(shopSite(() => 9));
});
afterAll(async () => {
  await site.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (name: string, args: Record<string, unknown> = {}) => ({
  text: `calling ${name}`,
  tool_calls: [{ name, arguments: args }],
});

/**
 * Chromium processes started by this test's workers, by pid (a crashed worker must not leave its browser
 * running). Other test files run Chromium at the same time: a process is this test's when its environment,
 * inherited from the worker that started it, holds the harness's own effect log path (test/helpers/harness.ts
 * gives it to every worker it spawns). The browser process itself carries it (some of its zygotes do not).
 */
function chromiumPids(marker: string): number[] {
  const listing = execFileSync('ps', ['-eo', 'pid=,comm='], { encoding: 'utf8' });
  return listing
    .split('\n')
    .filter((line) => /chrom/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker);
      } catch {
        return false; // gone already
      }
    });
}

describeWithBrowser('browser toolbox after a crash', () => {
  it('a worker SIGKILLed with the page open: another worker reopens the recorded page and the run completes', async () => {
    const outcome = await crashAndTakeOver(
      {
        replies: [
          call('browser_open', { url: `${site.origin}/` }),
          call('browser_click', { selector: '#form-link' }),
          call('browser_read', { selector: 'h1' }),
          { text: 'The form is open.' },
        ],
      },
      'browse the shop',
      // The worker dies right after the click's outcome is committed: its page, at /form, dies with it.
      'tool.after_commit@2',
      (started) => {
        harness = started;
        mkdirSync(join(started.dir, 'workspace'), { recursive: true });
      },
      {
        maxIterations: 10,
        agent: { toolboxes: ['browser'] },
        config: {
          tools: {
            workspace: 'workspace',
            browser: { private_hosts: ['127.0.0.1'], action_timeout_ms: 10_000 },
          },
        },
      },
    );
    const chat = await outcome.harness.transcript(outcome.sessionId);
    const results = chat.filter((message) => message.role === 'tool').flatMap(toolResultsOf);
    expect(results.map((result) => result.is_error)).toEqual([false, false, false]);
    const clicked = JSON.parse(results[1]?.content ?? '{}');
    expect(clicked).toMatchObject({ url: `${site.origin}/form`, title: 'Order' });
    // Read on the rescuing worker: the page it had never opened, reopened from the run's record.
    const read = JSON.parse(results[2]?.content ?? '{}');
    expect(read).toMatchObject({ url: `${site.origin}/form`, title: 'Order', content: 'Order a mug' });
    expect(read.restored).toContain('reopened from its URL');
    // The form page was loaded twice (once per worker); the click was not repeated.
    expect(site.requests.filter((path) => path === '/form')).toHaveLength(2);
    // The killed worker's Chromium goes when its pipe closes, and the rescuer closed its own when it stopped.
    const marker = `RATCHET_TEST_EFFECT_LOG=${outcome.harness.effectLog}`;
    await waitFor(
      () => chromiumPids(marker).length === 0,
      20_000,
      `the workers' Chromium processes to end (${chromiumPids(marker)})`,
    );
  });
});
