import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';

// The console's Inbox, Session and System pages in a real Chromium against the API, an in-process worker and
// real Redis: what a person sees and does on each, checked with axe, with a screenshot of each.

const script = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'ask me' },
      reply: {
        tool_calls: [
          { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } },
        ],
      },
    },
    {
      when: { role: 'user' as const, contains: 'type it' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'What is the code word?' } }] },
    },
    {
      when: { role: 'user' as const, contains: 'charge' },
      reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    },
    {
      when: { role: 'user' as const, contains: 'organise' },
      reply: {
        tool_calls: [
          { name: 'state_set', arguments: { key: 'plan', value: { step: 1, owner: 'agent' } } },
          {
            name: 'task_create',
            arguments: { title: 'Write the report', description: 'See https://example.com/spec' },
          },
          { name: 'note_write', arguments: { name: 'deadline', content: 'Due on Friday.' } },
        ],
      },
    },
  ],
  default: { text: 'done' },
};

let fixture: ConsoleFixture;

function submit(input: string, sessionId?: string): Promise<{ runId: string; sessionId: string }> {
  return fixture.submit(sessionId === undefined ? { input } : { input, session_id: sessionId });
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousA11yViolations(page)).toEqual([]);
}

describeWithBrowser('console: inbox, session and system pages', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script,
      harness: {
        agent: {
          toolboxes: ['test', 'utils', 'state', 'tasks', 'notes'],
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

  it('the inbox lists pending questions and approvals of every session and answers them in place', async () => {
    const asked = await submit('ask me something');
    const typed = await submit('type it in');
    const charged = await submit('charge the card');
    const refused = await submit('charge the card again');
    for (const run of [asked, typed, charged, refused]) await fixture.untilQuestion(run.sessionId);

    const page = await fixture.openConsole({ route: '#/inbox' });
    const items = page.getByTestId('inbox-item');
    await expect.poll(() => items.count(), { timeout: 30_000 }).toBe(4);
    // In the API's order (newest first), each naming its run and session.
    const listed = (await fixture.api.request('GET', '/v1/questions')).body.questions;
    expect(
      await items.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-question-id'))),
    ).toEqual(listed.map((question: { id: string }) => question.id));
    expect(listed.map((question: { kind: string }) => question.kind).sort()).toEqual([
      'approval',
      'approval',
      'ask_user',
      'ask_user',
    ]);
    const colour = items.filter({ hasText: 'Which colour?' });
    expect(await colour.getByRole('link', { name: asked.runId }).count()).toBe(1);
    expect(await colour.getByRole('link', { name: asked.sessionId }).count()).toBe(1);
    const approval = items.filter({ has: page.getByRole('link', { name: charged.runId }) });
    expect(await approval.getByTestId('approval-arguments').textContent()).toContain('"amount": 42');
    await expectAccessible(page);
    await screenshot(page, 'inbox');

    await colour.getByRole('button', { name: 'blue' }).click();
    await fixture.untilRunStatus(asked.runId, 'completed');
    const word = items.filter({ hasText: 'What is the code word?' });
    await word.getByLabel('Your answer').fill('swordfish');
    await word.getByTestId('answer-submit').click();
    await fixture.untilRunStatus(typed.runId, 'completed');
    await approval.getByTestId('approve').click();
    await fixture.untilRunStatus(charged.runId, 'completed');
    const rejection = items.filter({ has: page.getByRole('link', { name: refused.runId }) });
    await rejection.getByLabel('Reason to reject').fill('one charge is enough');
    await rejection.getByTestId('reject').click();
    await fixture.untilRunStatus(refused.runId, 'completed');

    // The answers reached the runs: the model read them, and only the approved charge was made, once.
    const answers = fixture.api.harness
      .modelCalls()
      .filter((call) => call.iteration === 2)
      .map((call) => call.messages.at(-1)?.text ?? '');
    for (const answer of ['blue', 'swordfish', 'one charge is enough']) {
      expect(
        answers.some((text) => text.includes(answer)),
        answer,
      ).toBe(true);
    }
    expect(fixture.api.harness.effects().map((effect) => effect.label)).toEqual(['charge 42']);
    await page.getByTestId('inbox-empty').waitFor({ timeout: 30_000 });

    // A question asked while the inbox is open shows up without a reload.
    const later = await submit('ask me later');
    await items.filter({ has: page.getByRole('link', { name: later.runId }) }).waitFor({ timeout: 30_000 });
  });

  it("a session's page shows its runs, state, tasks and notes, and a new run of it appears live", async () => {
    const first = await submit('organise the work');
    await fixture.untilRunStatus(first.runId, 'completed');

    const page = await fixture.openConsole({ route: `#/sessions/${first.sessionId}` });
    await page.getByTestId(`session-run-row-${first.runId}`).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('session-status').getAttribute('data-status')).toBe('idle');
    expect(await page.getByTestId('session-state').textContent()).toContain('"owner": "agent"');
    const task = page.getByTestId('session-tasks').getByRole('row', { name: /Write the report/ });
    expect(await task.textContent()).toContain('pending');
    // A URL in model text is a link, opened without a referrer or an opener.
    const link = task.getByRole('link', { name: 'https://example.com/spec' });
    expect(await link.getAttribute('rel')).toContain('noopener');
    const note = page.getByTestId('session-note');
    await note.getByText('deadline').click();
    await note.getByText('Due on Friday.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'session');

    const second = await submit('ask me once more', first.sessionId);
    await page.getByTestId(`session-run-row-${second.runId}`).waitFor({ timeout: 30_000 });
    // Its question is answerable here too.
    const question = page.getByTestId('session-questions').getByTestId('question');
    await question.getByRole('button', { name: 'red' }).click({ timeout: 30_000 });
    await fixture.untilRunStatus(second.runId, 'completed');
    await expect
      .poll(() => page.getByTestId(`session-run-row-${second.runId}`).textContent(), { timeout: 30_000 })
      .toContain('completed');
    expect(await page.getByTestId('session-questions').count()).toBe(0);
  });

  it('the system page shows the worker with its heartbeat, the step queues and the agents with usage', async () => {
    const { runId } = await submit('hello');
    await fixture.untilRunStatus(runId, 'completed');
    const system = (await fixture.api.request('GET', '/v1/system')).body;
    const workerId: string = system.workers[0].id;

    const page = await fixture.openConsole({ route: '#/system' });
    const worker = page.getByTestId(`worker-row-${workerId}`);
    await worker.waitFor({ timeout: 30_000 });
    expect(await worker.textContent()).toContain('alive');
    expect(await worker.getByTestId('worker-heartbeat').textContent()).toMatch(/ago$/);
    await page.getByTestId('queue-shard-0').waitFor();
    const agent = page.getByTestId('agent-row-agent');
    const agents = (await fixture.api.request('GET', '/v1/agents')).body.agents;
    const requests: number = agents.find((entry: { name: string }) => entry.name === 'agent').usage.requests;
    expect(requests).toBeGreaterThan(0);
    expect(await agent.textContent()).toContain(requests.toLocaleString('en-US'));
    expect(await page.getByTestId('admin-queues').textContent()).toContain('off');
    // Runs by status link to the runs page filtered by that status.
    const completed = page.getByTestId('system-runs-by-status').getByRole('link', { name: /completed/ });
    expect(await completed.getAttribute('href')).toBe('#/runs?status=completed');
    await expectAccessible(page);
    await screenshot(page, 'system');
  });

  it('each page reads at a narrow width', async () => {
    const asked = await submit('ask me at last');
    await fixture.untilQuestion(asked.sessionId);
    for (const [route, name, loaded] of [
      ['#/inbox', 'inbox', 'inbox-item'],
      [`#/sessions/${asked.sessionId}`, 'session', 'session-runs'],
      ['#/system', 'system', 'system-agents'],
    ] as const) {
      const page = await fixture.openConsole({ route, viewport: { width: 400, height: 800 } });
      await page.getByTestId(loaded).first().waitFor({ timeout: 30_000 });
      // Nothing is wider than the window: tables scroll inside their own box.
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} is wider than 400 px`).toBeLessThanOrEqual(0);
      await screenshot(page, `${name}-narrow`);
    }
  });
});
