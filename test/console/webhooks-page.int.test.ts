import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';

// The console's Webhooks page in a real Chromium, against the API, an in-process worker, real Redis and a
// real receiver: the deliveries with their status, attempts, last error and next attempt, and a redelivery.

let fixture: ConsoleFixture;
let server: Server;
let accept = false;
const received: string[] = [];

describeWithBrowser('console: webhooks page', () => {
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received.push(String(request.headers['webhook-id']));
        response.writeHead(accept ? 200 : 503).end(accept ? 'ok' : 'receiver is down for maintenance');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    fixture = await ConsoleFixture.start({
      script: { replies: [{ text: 'done' }] },
      harness: {
        config: {
          webhooks: [
            {
              id: 'billing',
              url,
              events: ['run_completed'],
              secret: `whsec_${randomBytes(32).toString('base64')}`,
              allow_private: true,
              // Long enough that the failed delivery stays "retrying" while the page is looked at.
              retry_base_ms: 600_000,
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await fixture?.close();
    server?.closeAllConnections();
    server?.close();
  });

  it('lists each delivery with its status, attempts, last error and next attempt, and redelivers one', async () => {
    const failing = await fixture.submit({ input: 'first' });
    await fixture.untilRunStatus(failing.runId, 'completed');
    const page = await fixture.openConsole({ route: '#/webhooks' });
    const rows = page.getByTestId('webhook-delivery');
    const failed = rows.filter({ has: page.getByRole('link', { name: failing.runId }) });
    await expect.poll(() => failed.getAttribute('data-status'), { timeout: 30_000 }).toBe('retrying');
    accept = true;
    const passing = await fixture.submit({ input: 'second' });
    await fixture.untilRunStatus(passing.runId, 'completed');
    const delivered = rows.filter({ has: page.getByRole('link', { name: passing.runId }) });
    await expect.poll(() => delivered.getAttribute('data-status'), { timeout: 30_000 }).toBe('delivered');

    expect(await rows.count()).toBe(2);
    // Newest first.
    expect(await rows.first().getByRole('link').textContent()).toBe(passing.runId);
    expect(await failed.getByTestId('webhook-status').textContent()).toBe('retrying');
    expect(await failed.getByTestId('webhook-error').textContent()).toBe(
      'the receiver answered 503: receiver is down for maintenance',
    );
    expect(await failed.getByTestId('webhook-attempts').textContent()).toMatch(/^1 of \d+$/);
    expect(await failed.getByTestId('webhook-next').locator('time').count()).toBe(1);
    expect(await delivered.getByTestId('webhook-error').textContent()).toBe('–');
    expect(await delivered.getByTestId('webhook-next').textContent()).toBe('–');
    expect(await page.getByTestId('nav-webhooks').getAttribute('aria-current')).toBe('page');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'webhooks');

    await failed.getByTestId('webhook-redeliver').click();
    await expect.poll(() => failed.getAttribute('data-status'), { timeout: 30_000 }).toBe('delivered');
    expect(await page.getByTestId('webhook-redelivered').textContent()).toContain('is sent again');
    const watch = await fixture.watchOf(page);
    expect(watch.cspViolations).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    await screenshot(page, 'webhooks-redelivered');
  }, 120_000);
});
