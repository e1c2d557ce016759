import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleFixture, describeWithBrowser, screenshot } from '../helpers/browser.js';
import { clerkScript, olderConfig, shortWaits, started } from '../helpers/generations.js';

// A run that waits for a worker (decision 0031), as a person sees it in a real Chromium: the run page says
// so and names what no live worker has; the runs list shows its status and counts it. Only a worker of an
// older generation (whose config lacks the agent `clerk`) runs, in a child process.

let fixture: ConsoleFixture;

describeWithBrowser('console: a run waiting for a worker', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      // Unused: the harness's agents have scripts of their own.
      script: { replies: [] },
      worker: false,
      harness: {
        agents: [
          { name: 'agent', script: { replies: [{ text: 'hi' }] } },
          { name: 'clerk', script: clerkScript },
        ],
        worker: shortWaits,
      },
    });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('the run page says what the run waits for; the runs list shows and counts it', async () => {
    const harness = fixture.api.harness;
    const older = harness.spawnWorker({ configPath: olderConfig(harness) });
    await started(older);
    const { runId } = await fixture.submit({ input: 'add 2 and 3', agent: 'clerk' });
    await fixture.untilRunStatus(runId, 'waiting_for_worker');

    const page = await fixture.openConsole({ route: `#/runs/${runId}` });
    await page.getByTestId('run-page').waitFor();
    await expect
      .poll(() => page.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('waiting_for_worker');
    expect(await page.getByTestId('run-status').textContent()).toBe('waiting for a worker');
    const note = page.getByTestId('waiting-for-worker');
    await note.waitFor();
    expect(await note.textContent()).toContain('no live worker has agent:clerk');
    await screenshot(page, 'run-waiting-for-worker');

    const list = await fixture.openConsole({ route: '#/runs' });
    const row = list.getByTestId(`run-row-${runId}`);
    await row.waitFor();
    expect(await row.getAttribute('data-status')).toBe('waiting_for_worker');
    await expect
      .poll(() => list.getByTestId('summary-waiting_for_worker').getAttribute('data-count'), {
        timeout: 30_000,
      })
      .toBe('1');
    await screenshot(list, 'runs-waiting-for-worker');
  }, 120_000);
});
