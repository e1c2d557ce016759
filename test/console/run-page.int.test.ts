import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/crash-scenario.js';

// The console's Runs and Run pages in a real Chromium against the API, an in-process worker and real Redis: the tree,
// transcript and step timeline of a run, hostile model text shown as text, and the actions (answer, cancel,
// retry, fork), each checked on the run records the API keeps.

/** What a model might answer to get script into the page: it must show as text, and nothing may run. */
const hostile =
  'Sum: 5 <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> ' +
  '[click](javascript:window.__pwned=3) javascript:window.__pwned=4 https://example.com/docs ' +
  'txt.\u202Eexe';

const script = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'calc:' },
      reply: {
        text: 'Adding <b>now</b>.',
        tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
      },
    },
    {
      when: { role: 'user' as const, contains: 'ask:' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city <i>exactly</i>?' } }] },
    },
    {
      when: { role: 'user' as const, contains: 'charge:' },
      reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    },
    {
      when: { role: 'user' as const, contains: 'flaky:' },
      reply: { text: 'Recovered.', fail: [{ kind: 'server_error' as const, status: 503 }] },
    },
    {
      when: { role: 'user' as const, contains: 'write:' },
      reply: {
        tool_calls: [
          {
            name: 'write_file',
            arguments: { path: 'notes/<img src=x onerror="window.__pwned = 5">.md', content: 'one\ntwo\n' },
          },
        ],
      },
    },
    { when: { role: 'tool' as const }, reply: { text: hostile } },
  ],
  default: { text: 'Forked and done.' },
};

let fixture: ConsoleFixture;

async function submit(input: string): Promise<{ runId: string; sessionId: string }> {
  const submitted = await fixture.api.request('POST', '/v1/runs', { body: { input } });
  expect(submitted.status).toBe(202);
  return { runId: submitted.body.run_id, sessionId: submitted.body.session_id };
}

// biome-ignore lint/suspicious/noExplicitAny: the API's run as JSON
async function runOf(runId: string): Promise<any> {
  return (await fixture.api.request('GET', `/v1/runs/${runId}`)).body;
}

async function untilStatus(runId: string, status: string): Promise<void> {
  await waitFor(async () => (await runOf(runId)).status === status, 30_000, `run ${runId} ${status}`);
}

async function openRun(runId: string): Promise<Page> {
  const page = await fixture.openConsole({ route: `#/runs/${runId}` });
  await page.getByTestId('run-page').waitFor();
  return page;
}

async function shownStatus(page: Page): Promise<string | null> {
  return page.getByTestId('run-status').getAttribute('data-status');
}

/** The run id the page's hash names, once it is another run's than `from`. */
async function navigatedFrom(page: Page, from: string): Promise<string> {
  await expect.poll(() => page.url(), { timeout: 30_000 }).toMatch(/#\/runs\/run_/);
  await expect.poll(() => new URL(page.url()).hash, { timeout: 30_000 }).not.toBe(`#/runs/${from}`);
  return decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
}

/** Presses Tab until `focused` (a page expression) holds; fails after 200 presses. */
async function tabUntil(page: Page, focused: string): Promise<void> {
  for (let presses = 0; presses < 200; presses += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(focused)) return;
  }
  throw new Error(`200 presses of Tab never focused what ${focused} asks for`);
}

/** Whether the focused element draws a focus ring (an outline or a box shadow). */
async function focusIsVisible(page: Page): Promise<boolean> {
  return (await page.evaluate(
    `(() => { const style = getComputedStyle(document.activeElement); return (style.outlineStyle !== 'none' && style.outlineWidth !== '0px') || style.boxShadow !== 'none'; })()`,
  )) as boolean;
}

async function expectNothingRan(page: Page): Promise<void> {
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  const watch = await fixture.watchOf(page);
  expect(watch.dialogs).toEqual([]);
  expect(watch.cspViolations).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
}

describeWithBrowser('console: the runs and run pages', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script,
      harness: {
        agent: {
          toolboxes: ['test', 'utils', 'filesystem'],
          tools: { charge_card: { requires_approval: true } },
        },
      },
    });
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it("shows a finished run's tree, transcript and step timeline, with model and tool text as text", async () => {
    const { runId } = await submit('calc: add 2 and 3');
    await untilStatus(runId, 'completed');
    const page = await openRun(runId);
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');

    // The tree: the run itself, marked as the one shown.
    await expect.poll(() => page.getByTestId(`tree-node-${runId}`).count(), { timeout: 30_000 }).toBe(1);

    // The definition the run works under (decision 0030): its hash, cut to 12 digits.
    const hash = (await runOf(runId)).definition?.hash ?? '';
    expect(hash).toMatch(/^[0-9a-f]{32}$/);
    expect(await page.getByTestId('run-definition').textContent()).toBe(hash.slice(0, 12));

    // The transcript: the user's input, the reply with its tool call, the result, the final answer.
    const transcript = page.getByTestId('transcript');
    await expect
      .poll(
        () =>
          transcript
            .getByTestId('message')
            .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-role'))),
        {
          timeout: 30_000,
        },
      )
      .toEqual(['user', 'assistant', 'tool', 'assistant']);
    const call = transcript.getByTestId('tool-call');
    expect(await call.locator('summary').textContent()).toContain('add');
    await call.locator('summary').click();
    expect(await call.locator('pre').textContent()).toContain('"a": 2');
    await transcript.getByTestId('tool-result').locator('summary').click();
    expect(await transcript.getByTestId('tool-result').locator('pre').textContent()).toContain('5');

    // Hostile text is text: the tags are visible characters, only the https link is a link, the bidi
    // override is shown escaped.
    const answer = transcript.getByTestId('message').last();
    const text = (await answer.textContent()) ?? '';
    expect(text).toContain('<script>window.__pwned = 1</script>');
    expect(text).toContain('<img src=x onerror="window.__pwned = 2">');
    expect(text).toContain('txt.\\u202Eexe');
    expect(text).not.toContain('\u202E');
    expect(await page.locator('main script, main img, main b, main i').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    const link = answer.getByRole('link', { name: 'https://example.com/docs' });
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('rel')).toContain('noopener');
    expect(await page.getByTestId('run-result').textContent()).toContain('<script>');

    // The timeline: two model calls and one tool call on the axis, and the table with the totals.
    const timeline = page.getByTestId('timeline');
    await expect.poll(() => timeline.locator('[data-kind="model"]').count(), { timeout: 30_000 }).toBe(2);
    expect(await timeline.locator('[data-kind="tool"]').count()).toBe(1);
    expect(await page.getByTestId('step-row-1').textContent()).toContain('add');
    expect(await page.getByTestId('step-row-2').count()).toBe(1);
    const run = await runOf(runId);
    const total = (await page.getByTestId('steps-total').textContent()) ?? '';
    expect(total).toContain(run.usage.input_tokens.toLocaleString('en-US'));
    expect(total).toContain(run.usage.output_tokens.toLocaleString('en-US'));

    expect(await seriousA11yViolations(page)).toEqual([]);
    await expectNothingRan(page);
    await screenshot(page, 'run');
  });

  it('shows each file a tool changed in the transcript, its path as text', async () => {
    const { runId } = await submit('write: a note');
    await untilStatus(runId, 'completed');
    const page = await openRun(runId);
    const note = page.locator('[data-testid="transcript-note"][data-kind="file_change"]');
    await note.waitFor();
    expect(await note.textContent()).toBe(
      'File: notes/<img src=x onerror="window.__pwned = 5">.md created by write_file (+2 −0 lines, 8 bytes)',
    );
    expect(await page.locator('main img').count()).toBe(0);
    await expectNothingRan(page);
  });

  it('answers the run’s question in place, and the run completes live', async () => {
    const { runId, sessionId } = await submit('ask: where to?');
    await untilStatus(runId, 'waiting_input');
    const page = await openRun(runId);
    const form = page.getByTestId('pending-questions').getByTestId('answer-form');
    await form.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('pending-questions').textContent()).toContain('Which city <i>exactly</i>?');
    await form.getByLabel('Your answer').fill('Lisbon');
    await form.getByTestId('answer-submit').click();
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    const questions = (await fixture.api.request('GET', `/v1/sessions/${sessionId}/questions`)).body
      .questions;
    expect(questions).toEqual([]);
    const lastRequest = fixture.api.harness
      .modelCalls()
      .filter((call) => (call as unknown as { run_id: string }).run_id === runId)
      .at(-1);
    expect(lastRequest?.messages.at(-1)?.text).toContain('Lisbon');
    // The tool result with the answer arrived in the transcript through the event stream.
    await expect
      .poll(() => page.getByTestId('transcript').getByTestId('message').last().textContent(), {
        timeout: 30_000,
      })
      .toContain('Sum: 5');
    await expectNothingRan(page);
  });

  it('is usable by keyboard alone: from the runs list to a run, answering its question', async () => {
    const { runId } = await submit('ask: by keyboard');
    await untilStatus(runId, 'waiting_input');
    const page = await fixture.openConsole({ route: '#/runs' });
    await page.getByTestId(`run-row-${runId}`).waitFor({ timeout: 30_000 });
    // Tab to the run's link (past the skip link, the nav, the filters), with a focus ring a person can see.
    await tabUntil(page, `document.activeElement?.getAttribute('href') === '#/runs/${runId}'`);
    expect(await focusIsVisible(page)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByTestId('run-page').waitFor({ timeout: 30_000 });
    await page.getByTestId('pending-questions').getByTestId('answer-form').waitFor({ timeout: 30_000 });
    // Tab to the answer's field and type; Tab on to its send button and press Enter.
    await tabUntil(
      page,
      `document.activeElement?.closest('[data-testid="pending-questions"]') !== null && document.activeElement?.tagName === 'TEXTAREA'`,
    );
    expect(await focusIsVisible(page)).toBe(true);
    await page.keyboard.type('Porto');
    await tabUntil(page, `document.activeElement?.getAttribute('data-testid') === 'answer-submit'`);
    expect(await focusIsVisible(page)).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    const lastRequest = fixture.api.harness
      .modelCalls()
      .filter((call) => (call as unknown as { run_id: string }).run_id === runId)
      .at(-1);
    expect(lastRequest?.messages.at(-1)?.text).toContain('Porto');
  });

  it('cancels a waiting run, retries it, and shows the retry, which completes', async () => {
    const { runId } = await submit('ask: cancel me');
    await untilStatus(runId, 'waiting_input');
    const page = await openRun(runId);
    await page.getByTestId('cancel-run').click();
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('cancelled');
    expect((await runOf(runId)).status).toBe('cancelled');

    await page.getByTestId('retry-run').click();
    const retryId = await navigatedFrom(page, runId);
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    const retry = await runOf(retryId);
    expect(retry.origin).toMatchObject({ kind: 'retry', run_id: runId });
    expect((await runOf(runId)).retried_by).toBe(retryId);
    expect(await page.getByTestId('origin-link').getAttribute('href')).toBe(`#/runs/${runId}`);
    await expectNothingRan(page);
  });

  it('forks at the iteration chosen in the transcript, with a new message, and goes to the fork', async () => {
    const { runId, sessionId } = await submit('calc: fork me');
    await untilStatus(runId, 'completed');
    const page = await openRun(runId);
    await page.getByTestId('fork-at-1').click();
    const form = page.getByTestId('fork-form');
    expect(await form.textContent()).toContain('iteration 1');
    await form.getByLabel('New message (optional)').fill('and now something else');
    await form.getByTestId('fork-run').click();
    const forkId = await navigatedFrom(page, runId);
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    const fork = await runOf(forkId);
    expect(fork.origin).toMatchObject({ kind: 'fork', run_id: runId, at_iteration: 1 });
    expect(fork.session_id).not.toBe(sessionId);
    expect(fork.result).toBe('Forked and done.');
    // The fork's transcript starts with the copied chat (read from its session: it has no events for it).
    await expect
      .poll(
        () =>
          page
            .getByTestId('transcript')
            .getByTestId('message')
            .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-role'))),
        { timeout: 30_000 },
      )
      .toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    await expectNothingRan(page);
  });

  it("marks a step's failed attempt in the transcript, and its second execution on the timeline", async () => {
    const { runId } = await submit('flaky: try twice');
    await untilStatus(runId, 'completed');
    const page = await openRun(runId);
    const note = page.getByTestId('transcript').locator('[data-testid="transcript-note"][data-kind="error"]');
    await note.waitFor({ timeout: 30_000 });
    expect(await note.textContent()).toContain('it will be retried');
    const timeline = page.getByTestId('timeline');
    await expect.poll(() => timeline.getByTestId('timeline-attempt').count(), { timeout: 30_000 }).toBe(1);
    expect(await timeline.getByTestId('timeline-attempt').locator('title').textContent()).toContain('retry');
    expect(await page.getByTestId('step-row-1').textContent()).toContain('2 (retry)');
    await expectNothingRan(page);
  });

  it('approves a tool call with edited arguments, and rejects another with a reason the model reads', async () => {
    const edited = await submit('charge: the card');
    const rejected = await submit('charge: again');
    for (const run of [edited, rejected]) await untilStatus(run.runId, 'waiting_input');

    const page = await openRun(edited.runId);
    const form = page.getByTestId('pending-questions').getByTestId('answer-form');
    await form.waitFor({ timeout: 30_000 });
    expect(await form.getByTestId('approval-arguments').textContent()).toContain('"amount": 42');
    await form.getByTestId('edit-arguments').click();
    await form.getByLabel('Arguments (JSON)').fill('{"amount": 7}');
    await form.getByTestId('approve-edited').click();
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    // The charge made is the edited one, once.
    expect(fixture.api.harness.effects().map((effect) => effect.label)).toContain('charge 7');
    expect(fixture.api.harness.effects().map((effect) => effect.label)).not.toContain('charge 42');

    const other = await openRun(rejected.runId);
    const rejectForm = other.getByTestId('pending-questions').getByTestId('answer-form');
    await rejectForm.waitFor({ timeout: 30_000 });
    await rejectForm.getByLabel('Reason to reject (the model reads it)').fill('not this month');
    await rejectForm.getByTestId('reject').click();
    await expect.poll(() => shownStatus(other), { timeout: 30_000 }).toBe('completed');
    const sent = fixture.api.harness
      .modelCalls()
      .filter((call) => (call as unknown as { run_id: string }).run_id === rejected.runId)
      .at(-1);
    expect(sent?.messages.at(-1)?.text).toContain('not this month');
    expect(fixture.api.harness.effects().filter((effect) => effect.label.startsWith('charge'))).toHaveLength(
      1,
    );
    await expectNothingRan(other);
  });

  // Last, so the list holds the runs of the tests above (its screenshot is the README's).
  it('the runs page counts runs by status, filters them, and finds one by words of its task or by its id', async () => {
    // The task is user (or, for a child run, model) text: it shows as text.
    const done = await submit('calc: one <img src=x onerror="window.__pwned = 6">\nsecond line');
    const waiting = await submit('ask: two');
    await untilStatus(done.runId, 'completed');
    await untilStatus(waiting.runId, 'waiting_input');
    const page = await fixture.openConsole({ route: '#/runs' });
    const table = page.getByTestId('runs-table');
    await table.getByTestId(`run-row-${done.runId}`).waitFor({ timeout: 30_000 });
    await table.getByTestId(`run-row-${waiting.runId}`).waitFor({ timeout: 30_000 });
    const summary = (await fixture.api.request('GET', '/v1/runs/summary')).body;
    await expect
      .poll(() => page.getByTestId('summary-waiting_input').getAttribute('data-count'), { timeout: 30_000 })
      .toBe(String(summary.counts.waiting_input));
    // A finished row shows what the run used.
    const row = table.getByTestId(`run-row-${done.runId}`);
    expect(await row.getAttribute('data-status')).toBe('completed');
    const listed = (await runOf(done.runId)).usage;
    expect(await row.getByTestId('run-tokens').textContent()).toBe(
      (listed.input_tokens + listed.output_tokens).toLocaleString('en-US'),
    );
    // What the run is about: its input's first line, as text, the link to its page.
    expect(await row.getByTestId('run-task').textContent()).toBe(
      'calc: one <img src=x onerror="window.__pwned = 6">',
    );

    await page.getByLabel('Status', { exact: true }).selectOption('waiting_input');
    await expect
      .poll(() => new URL(page.url()).hash, { timeout: 30_000 })
      .toBe('#/runs?status=waiting_input');
    await expect.poll(() => table.getByTestId(`run-row-${done.runId}`).count(), { timeout: 30_000 }).toBe(0);
    expect(
      await table
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))),
    ).toEqual(expect.arrayContaining(['waiting_input']));
    expect(
      new Set(
        await table
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))),
      ),
    ).toEqual(new Set(['waiting_input']));

    // Words of the task, in any case: only that run (the API's text search).
    await page.getByTestId('clear-filters').click();
    await page.getByLabel('Search the task, or a run id').fill('CALC: ONE');
    await page.getByTestId('search-submit').click();
    await expect.poll(() => new URL(page.url()).hash, { timeout: 30_000 }).toContain('text=CALC');
    await expect
      .poll(
        () =>
          table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-testid'))),
        { timeout: 30_000 },
      )
      .toEqual([`run-row-${done.runId}`]);
    await page.getByLabel('Search the task, or a run id').fill('no run is about this');
    await page.getByTestId('search-submit').click();
    await page.getByTestId('runs-empty').waitFor({ timeout: 30_000 });

    // A run id (prefix) finds the run by its id.
    await page.getByTestId('clear-filters').click();
    await page.getByLabel('Search the task, or a run id').fill(done.runId);
    await page.getByTestId('search-submit').click();
    await expect
      .poll(
        () =>
          table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-testid'))),
        {
          timeout: 30_000,
        },
      )
      .toEqual([`run-row-${done.runId}`]);
    await page.getByLabel('Agent', { exact: true }).fill('nobody');
    await page.getByTestId('search-submit').click();
    await page.getByTestId('runs-empty').waitFor({ timeout: 30_000 });

    await page.getByTestId('clear-filters').click();
    await table.getByTestId(`run-link`).first().waitFor({ timeout: 30_000 });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'runs');
    // At a narrow width nothing is wider than the window (the table scrolls in its own box); so for a run.
    for (const [route, name, loaded] of [
      ['#/runs', 'runs-narrow', 'runs-table'],
      [`#/runs/${done.runId}`, 'run-page-narrow', 'steps-table'],
    ] as const) {
      const narrow = await fixture.openConsole({ route, viewport: { width: 400, height: 800 } });
      await narrow.getByTestId(loaded).waitFor({ timeout: 30_000 });
      const overflow = await narrow.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} is wider than 400 px`).toBeLessThanOrEqual(0);
      await screenshot(narrow, name);
    }
    await table.getByTestId(`run-row-${done.runId}`).getByTestId('run-link').click();
    await expect.poll(() => shownStatus(page), { timeout: 30_000 }).toBe('completed');
    await expectNothingRan(page);
  });
});

type Call = { name: string; arguments: Record<string, unknown> };
const delegate = (agent: string, goal: string): Call => ({
  name: 'delegate_to_agent',
  arguments: { agent, task: `work on ${goal}`, sub_goal: goal },
});

describeWithBrowser("console: a supervisor's run", () => {
  let supervised: ConsoleFixture;
  beforeAll(async () => {
    supervised = await ConsoleFixture.start({
      script: { default: { text: 'unused' } },
      harness: {
        agents: [
          {
            name: 'boss',
            script: {
              replies: [
                {
                  tool_calls: [
                    {
                      name: 'declare_sub_goals',
                      arguments: {
                        sub_goals: [
                          { id: 'a', title: 'first part' },
                          { id: 'b', title: 'second part' },
                          { id: 'c', title: 'third part' },
                          { id: 'd', title: 'fourth part' },
                        ],
                      },
                    },
                  ],
                },
                { tool_calls: [delegate('helper', 'a'), delegate('broken', 'b')] },
                // Once a and b have their results (the next request records them), c's child asks and waits.
                { tool_calls: [delegate('asker', 'c')] },
              ],
              default: { text: 'stopping here' },
            },
            options: { max_iterations: 10, supervisor: {} },
          },
          { name: 'helper', script: { default: { text: 'helped' } } },
          // Every attempt of its model call is refused (auth errors are not retried): its run fails.
          {
            name: 'broken',
            script: {
              default: { text: 'never', fail: [{ kind: 'auth' }, { kind: 'auth' }, { kind: 'auth' }] },
            },
          },
          {
            name: 'asker',
            script: {
              default: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which part?' } }] },
            },
          },
        ],
      },
    });
  });
  afterEach(async () => {
    await supervised.closePages();
  });
  afterAll(async () => {
    await supervised?.close();
  });

  it('shows its sub-goals as [✓] [✗] [→] [ ] under it in the tree, with its child runs below', async () => {
    const submitted = await supervised.api.request('POST', '/v1/runs', { body: { input: 'do it all' } });
    const runId: string = submitted.body.run_id;
    await waitFor(
      async () => (await supervised.api.request('GET', `/v1/runs/${runId}`)).body.status === 'waiting_input',
      30_000,
      'the supervisor waiting for its asking child',
    );
    const page = await supervised.openConsole({ route: `#/runs/${runId}` });
    const goals = page.getByTestId('sub-goals').getByTestId('sub-goal');
    await expect
      .poll(() => goals.allTextContents(), { timeout: 30_000 })
      .toEqual(['[✓] first part', '[✗] second part', '[→] third part', '[ ] fourth part']);
    const tree = page.getByTestId('run-tree');
    await expect
      .poll(
        () =>
          tree
            .locator('.tree-children > li')
            .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-status')))
            // a's and b's children were asked for in one reply and start in either order: sorted, they are
            // one completed and one failed; c's, asked for later, comes after them.
            .then((statuses) => [...statuses.slice(0, 2).sort(), ...statuses.slice(2)]),
        { timeout: 30_000 },
      )
      // The asking child waits for input in the tree as on its own page and in the list: one rule for all.
      .toEqual(['completed', 'failed', 'waiting_input']);
    // So does the supervisor, in its header and at the top of its tree.
    await expect
      .poll(() => tree.locator(':scope > ul > li').first().getAttribute('data-status'), { timeout: 30_000 })
      .toBe('waiting_input');
    expect(await shownStatus(page)).toBe('waiting_input');
    // Its usage with its children's: the header's total is its tree's (the API sums it), beside its own.
    const treeTop = (await supervised.api.request('GET', `/v1/runs/${runId}/tree`)).body.runs[0];
    await expect
      .poll(() => page.getByTestId('run-tokens-total').textContent(), { timeout: 30_000 })
      .toMatch(/^[\d,]+ \/ [\d,]+$/);
    const [totalIn = '', totalOut = ''] = ((await page.getByTestId('run-tokens-total').textContent()) ?? '')
      .split(' / ')
      .map((count) => count.replaceAll(',', ''));
    // Nothing moves while the tree waits for the answer: the page and the API give the same sums.
    expect(Number(totalIn)).toBe(treeTop.total.tokens.input);
    expect(Number(totalOut)).toBe(treeTop.total.tokens.output);
    expect(Number(totalIn)).toBeGreaterThan(treeTop.tokens.input);
    expect(await tree.textContent()).toContain('asker');
    // The asking child's question is the supervisor's too: answerable on its page.
    await page.getByTestId('pending-questions').getByTestId('answer-form').waitFor({ timeout: 30_000 });
    expect(await seriousA11yViolations(page)).toEqual([]);

    // A child run's page shows its own chat (the delegated task and its answer), not the session's.
    await tree.getByRole('link', { name: 'helper' }).click();
    await expect
      .poll(() => page.getByTestId('transcript').getByTestId('message').allTextContents(), {
        timeout: 30_000,
      })
      .toEqual([expect.stringContaining('work on a'), expect.stringContaining('helped')]);
  });
});
