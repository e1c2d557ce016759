import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import type { RatchetWorker } from '../../src/worker/index.js';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/crash-scenario.js';

// Watching and steering runs in the console, in a real Chromium against the API, a worker and real Redis:
// a run appears and finishes live in the list, its tree (with its child) and timeline, approving a tool
// call, cancelling a run mid tool call, and retrying a failed run, each done by clicking in the page.
// run-page.int.test.ts answers a question, cancels a waiting run and forks on the Run page; the inbox test
// answers questions too.

const user = 'user' as const;

/** The lead's script; `flaky` runs fail (a 401 from the provider, not retried) until the outage is over. */
function leadScript(outage: boolean): Script {
  return {
    rules: [
      {
        when: { role: user, contains: 'delegate' },
        reply: {
          text: 'Asking the helper.',
          tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find it' } }],
          delay_ms: 600,
        },
      },
      {
        when: { role: user, contains: 'charge' },
        reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 7 } }] },
      },
      {
        when: { role: user, contains: 'forever' },
        reply: { tool_calls: [{ name: 'slow_echo', arguments: { text: 'never seen', delay_ms: 60_000 } }] },
      },
      {
        when: { role: user, contains: 'flaky' },
        reply: outage ? { text: 'never seen', fail: [{ kind: 'auth' }] } : { text: 'back again' },
      },
    ],
    default: { text: 'done' },
  };
}

let fixture: ConsoleFixture;
let worker: RatchetWorker;

function submit(input: string): Promise<{ runId: string; sessionId: string }> {
  return fixture.submit({ input });
}

/** Waits until the run page shows the status. */
async function shownStatus(page: Page, status: string): Promise<void> {
  await expect
    .poll(() => page.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 })
    .toBe(status);
}

/** The run id the page is on (from its hash). */
function pageRunId(page: Page): string {
  return decodeURIComponent(new URL(page.url()).hash.replace(/^#\/runs\//, ''));
}

describeWithBrowser('console: watching and steering runs', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      // The lead reads its script from script.json (the harness writes `script` there), so a worker started
      // later reads a new one: the retry test ends a provider outage that way.
      script: leadScript(true),
      worker: false,
      harness: {
        agents: [
          {
            name: 'lead',
            script: { script: 'script.json' } as unknown as Script,
            toolboxes: ['test', 'utils'],
            tools: { charge_card: { requires_approval: true } },
          },
          { name: 'helper', script: { default: { text: 'found it' } } },
        ],
      },
    });
    worker = await fixture.api.harness.startWorker();
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('a run appears in the list and finishes live; its page shows the tree with its child and the timeline', async () => {
    const page = await fixture.openConsole({ route: '#/runs' });
    await page.getByTestId('runs-summary').waitFor({ timeout: 30_000 });
    const { runId } = await submit('delegate the search');
    const row = page.getByTestId(`run-row-${runId}`);
    await row.waitFor({ timeout: 30_000 });
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');

    await row.getByTestId('run-link').click();
    await shownStatus(page, 'completed');
    expect(pageRunId(page)).toBe(runId);
    const tree = (await fixture.api.request('GET', `/v1/runs/${runId}/tree`)).body.runs;
    expect(tree).toHaveLength(2);
    const tree0 = page.getByTestId('run-tree');
    for (const node of tree) await tree0.getByTestId(`tree-node-${node.run_id}`).waitFor({ timeout: 30_000 });
    // The child's node links to its own page.
    const child = tree[1].run_id as string;
    expect(await tree0.getByTestId(`tree-node-${child}`).getByRole('link').first().getAttribute('href')).toBe(
      `#/runs/${child}`,
    );
    await page
      .getByTestId('transcript')
      .getByText('found it')
      .first()
      .waitFor({ state: 'attached', timeout: 30_000 });
    await page.getByTestId('timeline-svg').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('timeline-bar').count()).toBeGreaterThan(0);
    await page.getByTestId('step-row-1').waitFor();
    await page.getByTestId('step-row-2').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'run');
    await page.setViewportSize({ width: 400, height: 800 });
    await screenshot(page, 'run-narrow');
  });

  it('approves a tool call on the run page', async () => {
    const charging = await submit('charge it');
    const page = await fixture.openConsole({ route: `#/runs/${charging.runId}` });
    const approval = page.getByTestId('pending-questions');
    await approval.getByTestId('approve').waitFor({ timeout: 30_000 });
    expect(await approval.getByTestId('approval-arguments').textContent()).toContain('"amount": 7');
    expect(fixture.api.harness.effects()).toEqual([]);
    await approval.getByTestId('approve').click();
    await shownStatus(page, 'completed');
    expect(fixture.api.harness.effects().map((effect) => effect.label)).toEqual(['charge 7']);
  });

  it('cancels a running run', async () => {
    const { runId } = await submit('work forever');
    // Its first reply is recorded and its minute-long tool call runs.
    await waitFor(
      async () => (await fixture.run(runId)).iterations === 1,
      30_000,
      `run ${runId} calling its tool`,
    );
    expect((await fixture.run(runId)).status).toBe('running');
    const page = await fixture.openConsole({ route: `#/runs/${runId}` });
    await page.getByTestId('cancel-run').click({ timeout: 30_000 });
    await shownStatus(page, 'cancelled');
    expect((await fixture.run(runId)).status).toBe('cancelled');
    expect(await page.getByTestId('cancel-run').count()).toBe(0);
  });

  it('retries a failed run once the failure is over, and goes to the retry', async () => {
    const { runId } = await submit('a flaky call');
    await fixture.untilRunStatus(runId, 'failed');
    const page = await fixture.openConsole({ route: `#/runs/${runId}` });
    await shownStatus(page, 'failed');
    await page.getByTestId('run-error').waitFor();

    // The provider is back: a worker started now reads the script without the outage.
    await worker.close(2000);
    writeFileSync(join(fixture.api.harness.dir, 'script.json'), JSON.stringify(leadScript(false)));
    worker = await fixture.api.harness.startWorker();

    await page.getByTestId('retry-run').click();
    await expect.poll(() => pageRunId(page), { timeout: 30_000 }).not.toBe(runId);
    const retryId = pageRunId(page);
    await shownStatus(page, 'completed');
    expect(await fixture.run(retryId)).toMatchObject({ status: 'completed', result: 'back again' });
    expect((await fixture.run(runId)).retried_by).toBe(retryId);
    // The failed run's page now names its retry and offers no second one.
    await page.goto(`${fixture.consoleUrl}#/runs/${runId}`);
    await page.getByTestId('retried-by').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('retry-run').count()).toBe(0);
  });
});
