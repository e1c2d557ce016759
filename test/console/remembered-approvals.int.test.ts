import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  ConsoleFixture,
  describeWithBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.js';

// Remembered approvals in the console (decision 0046), in a real Chromium against the API, an in-process
// worker and real Redis: approving a call for the session from its page, the approval listed, the next call
// let through without a question, and the Revoke button.

const script = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'charge' },
      reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    },
  ],
  default: { text: 'done' },
};

let fixture: ConsoleFixture;

describeWithBrowser('console: remembered approvals', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script,
      harness: { agent: { tools: { charge_card: { requires_approval: true } } } },
    });
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it("a session's page approves a tool for the session, lists the approval and revokes it", async () => {
    const first = await fixture.submit({ input: 'charge the card' });
    await fixture.untilQuestion(first.sessionId);
    const page = await fixture.openConsole({ route: `#/sessions/${first.sessionId}` });
    await page.getByTestId('approve-remember-tool').click();
    await fixture.untilRunStatus(first.runId, 'completed');

    const table = page.getByTestId('session-approvals');
    await table.waitFor({ timeout: 30_000 });
    const [approval] = (await fixture.api.request('GET', `/v1/sessions/${first.sessionId}/approvals`)).body
      .approvals;
    expect(approval).toMatchObject({ tool: 'charge_card', scope: 'tool' });
    const row = page.getByTestId(`session-approval-${approval.key}`);
    expect(await row.textContent()).toContain('charge_card');
    expect(await row.textContent()).toContain('every call');

    // The session's next call of the tool is not asked about.
    const second = await fixture.submit({ input: 'charge the card again', session_id: first.sessionId });
    await fixture.untilRunStatus(second.runId, 'completed');
    expect(fixture.api.harness.effects().map((effect) => effect.label)).toEqual(['charge 42', 'charge 42']);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'session-remembered-approvals');

    await page.getByTestId(`revoke-approval-${approval.key}`).click();
    await page.getByText('No remembered approvals').waitFor({ timeout: 30_000 });
    expect((await fixture.api.request('GET', `/v1/sessions/${first.sessionId}/approvals`)).body).toEqual({
      approvals: [],
    });
  });
});
