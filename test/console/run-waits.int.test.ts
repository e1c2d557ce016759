import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ConsoleFixture, describeWithBrowser, screenshot } from '../helpers/browser.js';
import { waitFor } from '../helpers/crash-scenario.js';

// The run page in a real Chromium shows what a run waits for (decision 0033): an event until its wait times
// out, a sleep until it ends; the wait goes away when the event comes.

const script = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'wait:' },
      reply: {
        tool_calls: [{ name: 'wait_for_event', arguments: { event: 'deploy.done', timeout_s: 3600 } }],
      },
    },
    {
      when: { role: 'user' as const, contains: 'sleep:' },
      reply: { tool_calls: [{ name: 'sleep', arguments: { seconds: 7200 } }] },
    },
    { when: { role: 'tool' as const }, reply: { text: 'Deployed.' } },
  ],
};

let fixture: ConsoleFixture;

async function submit(input: string): Promise<string> {
  const submitted = await fixture.api.request('POST', '/v1/runs', { body: { input } });
  expect(submitted.status).toBe(202);
  return submitted.body.run_id;
}

async function waitingOf(runId: string): Promise<{ kind: string; until: string }[]> {
  return (await fixture.api.request('GET', `/v1/runs/${runId}`)).body.waiting;
}

async function openRun(runId: string): Promise<Page> {
  const page = await fixture.openConsole({ route: `#/runs/${runId}` });
  await page.getByTestId('run-page').waitFor();
  return page;
}

describeWithBrowser('console: a waiting run', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script,
      harness: { agent: { toolboxes: ['waits'] }, worker: { question_recheck_ms: 60_000 } },
    });
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('shows the event a run waits for and until when; the wait goes when the event comes', async () => {
    const runId = await submit('wait: for the deploy');
    await waitFor(async () => (await waitingOf(runId)).length === 1, 30_000, 'the wait');
    const [wait] = await waitingOf(runId);
    const page = await openRun(runId);
    const shown = page.getByTestId('run-waits');
    await shown.waitFor({ timeout: 30_000 });
    expect(await shown.textContent()).toContain('For the event deploy.done until');
    expect(await page.getByTestId('run-wait-until').getAttribute('datetime')).toBe(wait?.until);
    await screenshot(page, 'run-waiting-for-event');

    const sent = await fixture.api.request('POST', '/v1/events', {
      body: { event: 'deploy.done', payload: { ok: true } },
    });
    expect(sent.status).toBe(200);
    await expect
      .poll(() => page.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('completed');
    await expect.poll(() => page.getByTestId('run-waits').count(), { timeout: 30_000 }).toBe(0);
  });

  it('shows a sleeping run with its wake time', async () => {
    const runId = await submit('sleep: two hours');
    await waitFor(async () => (await waitingOf(runId)).length === 1, 30_000, 'the sleep');
    const [sleep] = await waitingOf(runId);
    const page = await openRun(runId);
    const shown = page.getByTestId('run-waits');
    await shown.waitFor({ timeout: 30_000 });
    expect(await shown.textContent()).toContain('Sleeping until');
    expect(await page.getByTestId('run-wait-until').getAttribute('datetime')).toBe(sleep?.until);
    expect(Date.parse(sleep?.until ?? '') - Date.now()).toBeGreaterThan(7_000_000);
    await fixture.api.request('POST', `/v1/runs/${runId}/cancel`, { body: {} });
  });
});
