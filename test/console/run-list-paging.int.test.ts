import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';

// The console behind api.tokens (the token form, kept for the tab only) and a run list of 1,000 runs paged in
// the browser. The runs are submitted through the API with no worker: they stay queued, which is all paging
// needs, and 1,000 submissions take about a second (no model runs at all).

const token = 'console-test-token-0123456789';
const runCount = 1000;

let fixture: ConsoleFixture;
/** Newest first, as the list shows them. */
let submitted: string[] = [];

async function submitRuns(count: number): Promise<string[]> {
  const ids: string[] = [];
  const headers = { authorization: `Bearer ${token}` };
  // Fifty at a time: one at a time would take a round trip each, all at once would queue in the server.
  for (let start = 0; start < count; start += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, (_, offset) =>
        fixture.api.request('POST', '/v1/runs', { body: { input: `run ${start + offset}` }, headers }),
      ),
    );
    for (const response of batch) {
      expect(response.status).toBe(202);
      ids.push(response.body.run_id);
    }
  }
  return ids;
}

async function signIn(page: Page): Promise<void> {
  await page.getByTestId('token-form').waitFor({ timeout: 30_000 });
  await page.getByLabel('Token', { exact: true }).fill(token);
  await page.getByTestId('token-submit').click();
}

/** The run ids of the table as shown now. */
function shownRunIds(page: Page): Promise<string[]> {
  return page
    .locator('[data-testid^="run-row-"]:not([data-testid="run-row-status"])')
    .evaluateAll((rows) =>
      rows.map((row) => (row.getAttribute('data-testid') ?? '').slice('run-row-'.length)),
    );
}

describeWithBrowser('console: the token form, and paging through 1,000 runs', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script: { default: { text: 'done' } },
      worker: false,
      api: { tokens: [token], admin_queues: true },
    });
    const started = Date.now();
    const ids = await submitRuns(runCount);
    // Measured, not asserted (timing targets live in npm run bench): about a second on a 2-core machine.
    console.log(`submitted ${runCount} runs through the API in ${Date.now() - started} ms`);
    const listed: string[] = [];
    for (let cursor: string | null | undefined; cursor !== null; ) {
      const query = cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await fixture.api.request('GET', `/v1/runs?limit=500${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      listed.push(...page.body.runs.map((run: { id: string }) => run.id));
      cursor = page.body.next_cursor;
    }
    expect(new Set(listed)).toEqual(new Set(ids));
    submitted = listed;
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('asks for a token on 401, refuses a wrong one, and keeps the right one for the tab only', async () => {
    const page = await fixture.openConsole();
    await page.getByTestId('token-form').waitFor({ timeout: 30_000 });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'token');
    await page.getByLabel('Token', { exact: true }).fill('not-the-token-at-all-0000');
    await page.getByTestId('token-submit').click();
    await page.getByTestId('token-refused').waitFor({ timeout: 30_000 });

    await page.getByLabel('Token', { exact: true }).fill(token);
    await page.getByTestId('token-submit').click();
    await page.getByTestId('runs-table').waitFor({ timeout: 30_000 });
    // Kept in this tab's sessionStorage: a reload needs no token, another tab (context) asks again.
    await page.reload();
    await page.getByTestId('runs-table').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('token-form').count()).toBe(0);
    expect(await page.evaluate('document.cookie')).toBe('');
    const other = await fixture.openConsole();
    await signIn(other);
    await other.getByTestId('runs-table').waitFor({ timeout: 30_000 });

    // The System page links to the queue board, which is on here; it takes the token in its address once.
    await page.goto(`${fixture.consoleUrl}#/system`);
    const board = page.getByTestId('admin-queues');
    await board.getByRole('link').waitFor({ timeout: 30_000 });
    expect(await board.getByRole('link').getAttribute('href')).toBe('/admin/queues');
    expect(await board.textContent()).toContain('?token=');
    const opened = await fetch(`${fixture.api.url}/admin/queues`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await opened.body?.cancel();
    expect(opened.status).toBe(200);
  });

  it('pages through 1,000 runs: each comes once, newest first, and the pager stops at the last page', async () => {
    // 100 a page (the address's limit; 50 by default): ten pages, each checked, in half the time.
    const page = await fixture.openConsole({ route: '#/runs?limit=100' });
    await signIn(page);
    const total = page.getByTestId('summary-total');
    await expect.poll(() => total.getAttribute('data-count'), { timeout: 30_000 }).toBe(String(runCount));

    const pages: string[][] = [];
    let previousIds: string[] = [];
    const next = page.getByTestId('next-page');
    for (let pageNumber = 1; ; pageNumber += 1) {
      await expect
        .poll(() => page.getByTestId('page-number').textContent(), { timeout: 30_000 })
        .toBe(`Page ${pageNumber}`);
      // The table shows the new page once its call answered (the previous page stays until then); a cursor
      // may lead to an empty last page.
      await expect
        .poll(
          async () =>
            (await page.getByTestId('runs-empty').count()) > 0 ||
            ((await shownRunIds(page))[0] ?? previousIds[0]) !== previousIds[0],
          { timeout: 30_000 },
        )
        .toBe(true);
      const ids = await shownRunIds(page);
      pages.push(ids);
      previousIds = ids;
      if (pageNumber === 2) {
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'runs-paged');
      }
      if (ids.length === 0 || (await next.isDisabled())) break;
      await next.click();
    }
    expect(pages.filter((ids) => ids.length > 0).map((ids) => ids.length)).toEqual(Array(10).fill(100));
    const seen = pages.flat();
    expect(seen).toHaveLength(runCount);
    expect(seen).toEqual(submitted);

    // Back one page: the page before, as it was.
    await page.getByTestId('previous-page').click();
    await expect.poll(() => shownRunIds(page), { timeout: 30_000 }).toEqual(pages.at(-2));
  });
});
