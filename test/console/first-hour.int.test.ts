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

// What a new user found confusing in the console (issue 31, first hour, point 7), each checked in Chromium
// against the API: a team run's tokens (its members'), one status, duration and total for a run's header and
// its tree, the summary call's row in the steps, the runs list at 1280 and 400 px, the System page's parked
// step and shards, and the confirmation of an answer sent from the inbox.

let fixture: ConsoleFixture;

const big = (label: string) => ({ tool_calls: [{ name: 'big_result', arguments: { label, size: 4000 } }] });

/** A compacting agent's model: its context window is small, so its third request is made after a summary. */
const compacting = {
  replies: [big('a'), big('b'), big('c'), { text: 'summed up' }],
  summary: { text: 'SUMMARY: three results fetched' },
  // Spread into the provider's entry by the harness (multiAgentEntries): the window is the provider's.
  context_window: 4000,
} as Script;

beforeAll(async () => {
  fixture = await ConsoleFixture.start({
    script: { default: { text: 'unused' } },
    harness: {
      agents: [
        {
          name: 'asker',
          script: {
            rules: [
              {
                when: { role: 'user', contains: 'ask' },
                reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
              },
            ],
            default: { text: 'painted it' },
          },
          toolboxes: ['test', 'utils'],
        },
        {
          name: 'researcher',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'facts: owls hunt at night' } }],
            replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }],
          },
        },
        {
          name: 'writer',
          script: { rules: [{ when: { role: 'user', contains: 'facts' }, reply: { text: 'the article' } }] },
        },
        {
          name: 'compactor',
          script: compacting,
          effects: [{ kind: 'compact', params: { threshold: 0.5 } }],
          options: { max_iterations: 20 },
        },
      ],
      config: {
        teams: [
          {
            name: 'pipeline',
            members: [
              { agent: 'researcher', role: 'research' },
              { agent: 'writer', role: 'write' },
            ],
            coordinator: { kind: 'sequence' },
          },
        ],
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

// biome-ignore lint/suspicious/noExplicitAny: the API's answers as JSON
async function get(path: string): Promise<any> {
  const response = await fixture.api.request('GET', path);
  expect(response.status, path).toBe(200);
  return response.body;
}

async function finished(input: string, agent: string): Promise<{ runId: string; sessionId: string }> {
  const started = await fixture.submit({ input, agent });
  await fixture.untilRunStatus(started.runId, 'completed');
  return started;
}

async function openRun(runId: string): Promise<Page> {
  const page = await fixture.openConsole({ route: `#/runs/${runId}` });
  await page.getByTestId('run-tree').waitFor({ timeout: 30_000 });
  return page;
}

const count = (value: number) => value.toLocaleString('en-US');

describeWithBrowser('console: what a new user found confusing, fixed', () => {
  it("a team run counts its members' tokens in the list, its header and its tree; header and tree agree", async () => {
    const { runId } = await finished('Write about owls\nfor the school paper', 'pipeline');
    const tree = await get(`/v1/runs/${runId}/tree`);
    const [team, ...members] = tree.runs;
    // The team's coordinator made no model call: its own usage is 0, its members' is not.
    expect(team.tokens).toEqual({ input: 0, output: 0, cached_input: 0 });
    expect(members.map((member: { agent: string }) => member.agent)).toEqual(['researcher', 'writer']);
    const sum = (pick: (member: { tokens: { input: number; output: number } }) => number) =>
      members.reduce((total: number, member: never) => total + pick(member), 0);
    expect(team.total.tokens.input).toBe(sum((member) => member.tokens.input));
    expect(team.total.tokens.output).toBe(sum((member) => member.tokens.output));
    expect(team.total.tokens.input).toBeGreaterThan(0);

    // The list: its row counts the tree (GET /v1/runs' tree_usage), and shows what it is about.
    const list = await fixture.openConsole({ route: '#/runs' });
    const row = list.getByTestId(`run-row-${runId}`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('run-task').textContent()).toBe('Write about owls');
    expect(await row.getByTestId('run-tokens').textContent()).toBe(
      count(team.total.tokens.input + team.total.tokens.output),
    );

    // Its page: the header's total is the tree's, its own 0 beside it; the tree says the same.
    const page = await openRun(runId);
    await expect
      .poll(() => page.getByTestId('run-tokens-total').textContent(), { timeout: 30_000 })
      .toBe(`${count(team.total.tokens.input)} / ${count(team.total.tokens.output)}`);
    expect(await page.getByTestId('run-tokens').textContent()).toBe('0 / 0');
    const top = page.getByTestId(`tree-node-${runId}`);
    expect(await top.getByTestId('tree-node-total').first().textContent()).toContain(
      `${count(team.total.tokens.input + team.total.tokens.output)} tok.`,
    );
    // One duration: the header's is the one the tree shows for the run (the API's, finished_at - created_at).
    const duration = await page.getByTestId('run-duration').textContent();
    expect(duration).not.toBe('–');
    expect(await top.getByTestId('tree-node-facts').first().textContent()).toContain(`· ${duration}`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'team-run');
  });

  it("the summary call has its own row: the steps' total is the header's tokens", async () => {
    const { runId } = await finished('fetch three results', 'compactor');
    const steps = await get(`/v1/runs/${runId}/steps?limit=100`);
    const compacted = steps.steps.find((step: { compaction: unknown }) => step.compaction !== null);
    expect(compacted?.compaction.tokens.input).toBeGreaterThan(0);
    const run = await get(`/v1/runs/${runId}`);

    const page = await openRun(runId);
    const summaryRow = page.getByTestId(`step-summary-${compacted.iteration}`);
    await summaryRow.waitFor({ timeout: 30_000 });
    expect(await summaryRow.textContent()).toContain('summary of the chat');
    expect(await summaryRow.textContent()).toContain(count(compacted.compaction.tokens.input));
    const totals = await page
      .getByTestId('steps-total')
      .locator('td')
      .evaluateAll((cells) => cells.map((cell) => cell.textContent));
    expect(totals.slice(0, 2)).toEqual([count(run.usage.input_tokens), count(run.usage.output_tokens)]);
    expect(await page.getByTestId('run-tokens').textContent()).toBe(
      `${count(run.usage.input_tokens)} / ${count(run.usage.output_tokens)}`,
    );
    expect(await page.getByTestId('steps-differ').count()).toBe(0);
    await screenshot(page, 'run-compacted');
  });

  it('the runs list is whole at 1280 px and a list of cards at 400 px: no column hidden or cut', async () => {
    await finished(`Summarise the quarterly report ${'and its appendices '.repeat(12)}`, 'asker');
    for (const width of [1280, 400]) {
      const page = await fixture.openConsole({ route: '#/runs', viewport: { width, height: 900 } });
      const table = page.getByTestId('runs-table');
      await table.getByTestId('run-cost').first().waitFor({ timeout: 30_000 });
      // Nothing scrolls sideways: not the page, not the table's box.
      expect(
        await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
      expect(
        await page.evaluate(
          `(() => { const box = document.querySelector('.table-scroll'); return box.scrollWidth - box.clientWidth; })()`,
        ),
      ).toBeLessThanOrEqual(0);
      // Every cost is inside the window, whole.
      for (const box of await table.getByTestId('run-cost').evaluateAll((cells) =>
        cells.map((cell) => {
          const rect = cell.getBoundingClientRect();
          return { left: rect.left, right: rect.right, scroll: cell.scrollWidth - cell.clientWidth };
        }),
      )) {
        expect(box.left).toBeGreaterThanOrEqual(0);
        expect(box.right).toBeLessThanOrEqual(width);
        expect(box.scroll).toBeLessThanOrEqual(0);
      }
      if (width === 400) {
        // Each cell says which column it is.
        // An expression string: the tests are compiled without the DOM's types.
        const labels = await page.evaluate(
          `[...document.querySelectorAll('[data-testid="runs-table"] tbody tr:first-child td[data-label]')].map((cell) => getComputedStyle(cell, '::before').content)`,
        );
        expect(labels).toEqual(['"Agent"', '"Started"', '"Duration"', '"Iterations"', '"Tokens"', '"Cost"']);
      }
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, width === 400 ? 'runs-cards-narrow' : 'runs-wide');
    }
  });

  it('a waiting run: one status in header and tree, a parked step that says so, and an answer confirmed', async () => {
    const { runId, sessionId } = await fixture.submit({ input: 'ask me the colour', agent: 'asker' });
    await fixture.untilRunStatus(runId, 'waiting_input');

    // Its page: the header and the tree say the same.
    const page = await openRun(runId);
    await expect
      .poll(() => page.getByTestId(`tree-node-${runId}`).getAttribute('data-status'), { timeout: 30_000 })
      .toBe('waiting_input');
    expect(await page.getByTestId('run-status').getAttribute('data-status')).toBe('waiting_input');

    // The System page: the parked tool step is said to wait (for an answer), not counted as a delayed job;
    // the worker's shards are named as shards.
    const system = await fixture.openConsole({ route: '#/system' });
    await system.getByTestId('system-queues').waitFor({ timeout: 30_000 });
    await waitFor(
      async () => (await get('/v1/system')).queues.some((queue: { parked: number }) => queue.parked === 1),
      30_000,
      'the tool step parked',
    );
    const toolRow = system.locator('[data-testid^="queue-shard-"] tbody tr[data-kind="tool"]');
    await expect
      .poll(() => toolRow.locator('td[data-state="parked"]').textContent(), { timeout: 30_000 })
      .toBe('1');
    expect(await toolRow.locator('td[data-state="retrying"]').textContent()).toBe('0');
    expect(await system.getByTestId('system-queues').locator('thead').first().textContent()).toContain(
      'parked (waiting for an answer',
    );
    expect(await system.getByTestId('queues-legend').textContent()).toContain('1 run waits for an answer');
    for (const shards of await system.getByTestId('worker-shards').allTextContents())
      expect(shards).toMatch(/^(every shard|shard \d+|shards \d+(, \d+)+)$/);
    await screenshot(system, 'system-parked');

    // The inbox: answering says so, and the confirmation stays once the question has left the list.
    const inbox = await fixture.openConsole({ route: '#/inbox' });
    const item = inbox.locator(`[data-testid="inbox-item"]`, { hasText: 'Which colour?' });
    await item.getByTestId('answer-input').fill('red');
    await item.getByTestId('answer-submit').click();
    const receipt = inbox.getByTestId('answer-receipt');
    await receipt.waitFor({ timeout: 30_000 });
    expect(await receipt.textContent()).toContain('answered “red”');
    expect(await receipt.textContent()).toContain(runId);
    await expect.poll(() => inbox.getByTestId('inbox-item').count(), { timeout: 30_000 }).toBe(0);
    expect(await inbox.getByTestId('answer-receipt').count()).toBe(1);
    expect(await seriousA11yViolations(inbox)).toEqual([]);
    await screenshot(inbox, 'inbox-answered');
    await fixture.untilRunStatus(runId, 'completed');
    expect(
      (await get(`/v1/sessions/${sessionId}/questions`)).questions.filter(
        (question: { status: string }) => question.status === 'pending',
      ),
    ).toEqual([]);
  });
});
