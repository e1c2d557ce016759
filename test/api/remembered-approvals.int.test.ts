import { afterEach, describe, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

/** Remembered approvals over HTTP and the typed client: answer with remember, list, revoke, tenant scoped. */

const operator = 'operator-token-approvals-01';
const acme = 'acme-token-approvals-012345';
const globex = 'globex-token-approvals-01234';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const script = {
  replies: [
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { text: 'done' },
  ],
};

describe('remembered approvals over the API', () => {
  it('remembers with the answer, lists and revokes them, and another tenant gets a 404', async () => {
    api = await ApiHarness.start({
      script,
      api: { tokens: [operator, { token: acme, tenant: 'acme' }, { token: globex, tenant: 'globex' }] },
      harness: { agent: { tools: { charge_card: { requires_approval: true } } } },
    });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const client = new RatchetClient({ baseUrl: api.url, token: acme });
    const { runId, sessionId } = await api.submitRun('charge twice', { headers: as(acme) });
    let questionId = '';
    await waitFor(
      async () => {
        questionId = (await client.questions(sessionId))[0]?.id ?? '';
        return questionId !== '';
      },
      30_000,
      'the approval',
    );
    // Answered once the step is parked (a wake before that waits for the next recheck).
    await waitFor(
      async () => (await api?.engine.getRun(runId))?.status === 'waiting_input',
      30_000,
      'the run to wait for input',
    );

    // A remember value it does not know: a 400 naming the field.
    const bad = await api.request('POST', `/v1/sessions/${sessionId}/respond`, {
      headers: as(acme),
      body: { question_id: questionId, response: { decision: 'approve', remember: 'forever' } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('remember');

    // Another tenant can neither answer nor list nor revoke.
    const answeredByOther = await api.request('POST', `/v1/sessions/${sessionId}/respond`, {
      headers: as(globex),
      body: { question_id: questionId, response: { decision: 'approve', remember: 'tool' } },
    });
    expect(answeredByOther.status).toBe(404);

    await client.approve(sessionId, questionId, { decision: 'approve', remember: 'arguments' });
    const run = await client.wait(runId, { timeoutS: 60 });
    expect(run.status).toBe('completed');
    expect((await client.questions(sessionId)).length).toBe(0);

    const approvals = await client.approvals(sessionId);
    expect(approvals).toEqual([
      expect.objectContaining({
        tool: 'charge_card',
        scope: 'arguments',
        arguments: '{"amount":42}',
        question_id: questionId,
      }),
    ]);
    const key = approvals[0]?.key ?? '';
    for (const [method, path] of [
      ['GET', `/v1/sessions/${sessionId}/approvals`],
      ['DELETE', `/v1/sessions/${sessionId}/approvals/${key}`],
    ] as const) {
      const other = await api.request(method, path, { headers: as(globex) });
      expect(other.status, `${method} ${path}`).toBe(404);
    }
    // The operator sees them; the tenant revokes; a second revoke is a 404.
    const byOperator = await new RatchetClient({ baseUrl: api.url, token: operator }).approvals(sessionId);
    expect(byOperator.map((approval) => approval.key)).toEqual([key]);
    await client.revokeApproval(sessionId, key);
    expect(await client.approvals(sessionId)).toEqual([]);
    await expect(client.revokeApproval(sessionId, key)).rejects.toMatchObject({ status: 404 });
  });
});
