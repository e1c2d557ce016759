import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/crash-scenario.js';

// The console's Schedules page in a real Chromium against the API, an in-process worker and real Redis: each
// schedule with its timing, next fire and latest fires linking to their runs; pause and resume in place; a
// scheduled run's page names its schedule.

let fixture: ConsoleFixture;

describeWithBrowser('console: schedules page', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({ script: { replies: [{ text: 'scheduled answer' }] } });
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('lists schedules with their next fire and their runs, pauses and resumes them', async () => {
    const client = new RatchetClient({ baseUrl: fixture.api.url });
    await client.createSchedule({
      id: 'morning-report',
      cron: '0 7 * * 1-5',
      timezone: 'Europe/Paris',
      agent: 'agent',
      input: 'write the report',
    });
    await client.createSchedule({
      id: 'every-second',
      every_s: 1,
      agent: 'agent',
      input: 'tick',
      overlap: 'allow',
    });
    await waitFor(
      async () => (await client.schedule('every-second')).recent_fires.length >= 3,
      30_000,
      'three fires',
    );
    await client.pauseSchedule('every-second');

    const page = await fixture.openConsole({ route: '#/schedules' });
    const rows = page.getByTestId('schedule-row');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2);
    const ticking = rows.filter({ hasText: 'every-second' });
    const morning = rows.filter({ hasText: 'morning-report' });
    expect(await ticking.getAttribute('data-paused')).toBe('true');
    expect(await ticking.getByTestId('schedule-next').textContent()).toBe('paused');
    expect(await morning.textContent()).toContain('0 7 * * 1-5 (Europe/Paris)');
    expect(await morning.getByTestId('schedule-next').locator('time').getAttribute('datetime')).toBe(
      (await client.schedule('morning-report')).next_fire_at,
    );
    const runLinks = ticking.getByTestId('schedule-run');
    expect(await runLinks.count()).toBeGreaterThanOrEqual(3);
    const firstRun = await runLinks.first().getAttribute('data-run-id');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'schedules');

    // Resume in place: the row's next fire comes back.
    await ticking.getByTestId('schedule-toggle').click();
    await expect.poll(() => ticking.getAttribute('data-paused'), { timeout: 30_000 }).toBe('false');
    await ticking.getByTestId('schedule-toggle').click();
    await expect.poll(() => ticking.getAttribute('data-paused'), { timeout: 30_000 }).toBe('true');

    // A fire's link opens its run, whose page names the schedule.
    await runLinks.first().click();
    await page.waitForURL(`**#/runs/${firstRun}`);
    const origin = page.getByTestId('origin-schedule');
    await expect.poll(() => origin.textContent(), { timeout: 30_000 }).toContain('every-second');
    await screenshot(page, 'scheduled-run');
    const watch = await fixture.watchOf(page);
    expect(watch.dialogs).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
  }, 120_000);
});
