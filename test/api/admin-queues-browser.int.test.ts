import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, launchBrowser, screenshot } from '../helpers/browser.js';
import { ApiHarness } from './api-harness.js';

// The queue board in a real Chromium: opened with ?token= once, it draws every shard's queue under its own
// Content-Security-Policy (nothing refused, nothing fetched from another origin) and keeps working on reload.

const token = 'admin-queues-browser-token-0123456789';
let api: ApiHarness | undefined;
let browser: Browser | undefined;

describeWithBrowser('the queue board in a browser', () => {
  beforeAll(async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'done' } },
      api: { admin_queues: true, tokens: [token] },
    });
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('opens with ?token= once, shows the step queue, and breaks no policy', async () => {
    if (!api || !browser) throw new Error('not started');
    const harness = api;
    const submitted = await harness.request('POST', '/v1/runs', {
      body: { input: 'hi' },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(submitted.status).toBe(202);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const violations: string[] = [];
      const outside: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
      });
      page.on('request', (request) => {
        if (!request.url().startsWith(harness.url)) outside.push(request.url());
      });
      await page.route(
        (url) => !url.href.startsWith(harness.url),
        (route) => route.abort(),
      );

      await page.goto(`${harness.url}/admin/queues?token=${token}`);
      // The token left the address; the cookie carries the board.
      expect(page.url()).toBe(`${harness.url}/admin/queues`);
      await page.getByText('shard 0', { exact: false }).first().waitFor({ timeout: 30_000 });
      expect(await page.locator('body').textContent()).toContain('shard0-steps');
      await screenshot(page, 'admin-queues');

      await page.reload();
      await page.getByText('shard 0', { exact: false }).first().waitFor({ timeout: 30_000 });
      const cookies = await context.cookies();
      expect(cookies.map((cookie) => [cookie.name, cookie.path, cookie.httpOnly, cookie.sameSite])).toEqual([
        ['ratchet_admin_queues', '/admin/queues', true, 'Strict'],
      ]);
      // Only the web font bull-board links to is outside, and it was never fetched (the policy refuses it).
      expect(outside.filter((url) => !url.startsWith('https://fonts.googleapis.com/'))).toEqual([]);
      expect(violations.filter((text) => !text.includes('fonts.googleapis.com'))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
