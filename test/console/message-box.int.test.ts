import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/crash-scenario.js';

// The run page's message box (decision 0032), in a real Chromium against the API, a worker and real Redis:
// while a run is active a message is steered into it, queued behind it, or interrupts it, each by choosing
// in the box and clicking Send.

const script: Script = {
  rules: [
    {
      when: { role: 'user', contains: 'work a while' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 12_000 } }],
      },
    },
    {
      when: { role: 'user', contains: 'work forever' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 60_000 } }],
      },
    },
  ],
  default: { text: 'done' },
};

let fixture: ConsoleFixture;

async function shownStatus(page: Page, status: string): Promise<void> {
  await expect
    .poll(() => page.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 })
    .toBe(status);
}

async function inToolCall(runId: string): Promise<void> {
  await waitFor(
    async () => (await fixture.run(runId)).iterations === 1,
    30_000,
    `run ${runId} calling its tool`,
  );
}

async function sendFromBox(page: Page, text: string, onBusy: string): Promise<string | null> {
  const box = page.getByTestId('message-box');
  await box.getByTestId('message-input').fill(text);
  await box.getByTestId(`on-busy-${onBusy}`).check();
  await box.getByTestId('send-message').click();
  const sent = box.getByTestId('message-sent');
  await sent.waitFor({ timeout: 30_000 });
  return sent.getAttribute('data-delivery');
}

describeWithBrowser('console: a message to a busy session from the run page', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({ script });
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('steers a message into the active run; the box goes once the run ends', async () => {
    const { runId } = await fixture.submit({ input: 'work a while' });
    await inToolCall(runId);
    const page = await fixture.openConsole({ route: `#/runs/${runId}` });
    const box = page.getByTestId('message-box');
    await box.waitFor({ timeout: 30_000 });
    for (const value of ['steer', 'queue', 'interrupt', 'reject']) {
      expect(await box.getByTestId(`on-busy-${value}`).count()).toBe(1);
    }
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'run-message-box');
    expect(await sendFromBox(page, 'please also check the date', 'steer')).toBe('steered');
    await screenshot(page, 'run-message-steered');
    await shownStatus(page, 'completed');
    await page
      .getByTestId('transcript')
      .getByText('please also check the date')
      .first()
      .waitFor({ state: 'attached', timeout: 30_000 });
    expect(await page.getByTestId('message-box').count()).toBe(0);
  });

  it('queues a message behind the run, and interrupts it with another', async () => {
    const { runId, sessionId } = await fixture.submit({ input: 'work forever' });
    await inToolCall(runId);
    const page = await fixture.openConsole({ route: `#/runs/${runId}` });
    await page.getByTestId('message-box').waitFor({ timeout: 30_000 });
    expect(await sendFromBox(page, 'next, the summary', 'queue')).toBe('queued');
    const session = await fixture.api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.body.queued_messages).toHaveLength(1);

    await page.getByTestId('message-box').getByTestId('message-input').fill('stop, do this instead');
    await page.getByTestId('message-box').getByTestId('on-busy-interrupt').check();
    await page.getByTestId('message-box').getByTestId('send-message').click();
    // The page goes to the new run; the old one is cancelled at once (its minute-long call aborted).
    await expect.poll(() => page.url(), { timeout: 30_000 }).not.toContain(runId);
    await shownStatus(page, 'completed');
    expect((await fixture.run(runId)).status).toBe('cancelled');
    // The queued message ran after the interrupting one.
    await waitFor(
      async () =>
        (await fixture.api.request('GET', `/v1/sessions/${sessionId}`)).body.queued_messages.length === 0,
      30_000,
      'the queued message to start',
    );
    await screenshot(page, 'run-after-interrupt');
  });
});
