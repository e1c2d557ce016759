import { afterEach, describe, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { maxMessagesLimit, maxSenderChars } from '../../src/wire/index.js';
import { ApiHarness } from './api-harness.js';

/** GET /v1/sessions/:id/messages?sender=NAME (and `limit`), over HTTP and through the typed client. */

const operator = 'operator-token-sender-0123';
const acme = 'acme-token-sender-0123456';
const globex = 'globex-token-sender-01234';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const script = {
  replies: [
    { text: 'calculating', tool_calls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] },
    { text: 'It is 42.' },
  ],
};

describe('the chat filtered by sender', () => {
  it("returns one sender's messages with their chat indexes, bounded, and another tenant's session is a 404", async () => {
    api = await ApiHarness.start({
      script,
      api: { tokens: [operator, { token: acme, tenant: 'acme' }, { token: globex, tenant: 'globex' }] },
      harness: { agent: { toolboxes: ['utils'] } },
    });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const { runId, sessionId } = await api.submitRun('What is 6 * 7?', { headers: as(acme) });
    await api.engine.waitForRun(runId, { timeoutMs: 30_000 });

    const client = new RatchetClient({ baseUrl: api.url, token: acme });
    const all = await client.messages(sessionId);
    expect(all.map((message) => message.sender)).toEqual(['user', 'agent', 'calculate', 'agent']);

    const agent = await client.messages(sessionId, { sender: 'agent' });
    expect(agent.map((message) => [message.index, message.sender])).toEqual([
      [1, 'agent'],
      [3, 'agent'],
    ]);
    expect(agent.at(-1)?.parts).toEqual([{ type: 'text', text: 'It is 42.' }]);
    // limit and after page through one sender's messages by their chat index.
    const first = await client.messages(sessionId, { sender: 'agent', limit: 1 });
    expect(first.map((message) => message.index)).toEqual([1]);
    const next = await client.messages(sessionId, { sender: 'agent', after: 1, limit: 1 });
    expect(next.map((message) => message.index)).toEqual([3]);
    expect(await client.messages(sessionId, { sender: 'nobody' })).toEqual([]);

    // Bounds, named in the 400's message.
    const tooLong = await api.request(
      'GET',
      `/v1/sessions/${sessionId}/messages?sender=${'x'.repeat(maxSenderChars + 1)}`,
      { headers: as(acme) },
    );
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('sender');
    const tooMany = await api.request(
      'GET',
      `/v1/sessions/${sessionId}/messages?sender=agent&limit=${maxMessagesLimit + 1}`,
      { headers: as(acme) },
    );
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain('limit');

    // Another tenant's session does not exist for it; the operator sees it.
    const other = await api.request('GET', `/v1/sessions/${sessionId}/messages?sender=agent`, {
      headers: as(globex),
    });
    expect(other.status).toBe(404);
    const byOperator = await new RatchetClient({ baseUrl: api.url, token: operator }).messages(sessionId, {
      sender: 'calculate',
    });
    expect(byOperator.map((message) => message.index)).toEqual([2]);
  });
});
