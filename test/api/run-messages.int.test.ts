import { afterEach, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/runs/:id/messages: the chat a run works on, so a child run's transcript can be read from its own
// chat (GET /v1/sessions/:id/messages reads only the session's main chat, the root runs').

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it("reads a child run's own chat and a root run's session chat, after an index, and 404s an unknown run", async () => {
  api = await ApiHarness.start({
    script: { default: { text: 'unused' } },
    harness: {
      agents: [
        {
          name: 'lead',
          script: {
            rules: [
              {
                when: { role: 'user' as const, contains: 'delegate' },
                reply: {
                  tool_calls: [
                    { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find it' } },
                  ],
                },
              },
            ],
            default: { text: 'all done' },
          },
        },
        { name: 'helper', script: { default: { text: 'found it here' } } },
      ],
    },
  });
  const harness = api;
  const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'please delegate' } });
  const runId: string = submitted.body.run_id;
  const done = await harness.request('GET', `/v1/runs/${runId}/wait?timeout_s=30`);
  expect(done.body.status).toBe('completed');
  const tree = await harness.request('GET', `/v1/runs/${runId}/tree`);
  const child = tree.body.runs[1];
  expect(child).toMatchObject({ agent: 'helper', status: 'completed' });

  // The child's own chat: its task, then its answer; nothing of the lead's.
  const childChat = await harness.request('GET', `/v1/runs/${child.run_id}/messages`);
  expect(childChat.status).toBe(200);
  expect(childChat.body.chat_id).toBe(child.run_id);
  const childMessages: { role: string; index: number; content: unknown }[] = childChat.body.messages;
  expect(childMessages.map((message) => message.index)).toEqual(childMessages.map((_, index) => index));
  expect(JSON.stringify(childMessages.find((message) => message.role === 'user'))).toContain('find it');
  expect(JSON.stringify(childMessages.at(-1))).toContain('found it here');
  expect(JSON.stringify(childMessages)).not.toContain('please delegate');

  // The root run's chat is the session's: the same as GET /v1/sessions/:id/messages.
  const rootChat = await harness.request('GET', `/v1/runs/${runId}/messages`);
  expect(rootChat.body.chat_id).toBe('main');
  const sessionChat = await harness.request('GET', `/v1/sessions/${submitted.body.session_id}/messages`);
  expect(rootChat.body.messages).toEqual(sessionChat.body.messages);
  expect(JSON.stringify(rootChat.body.messages)).toContain('all done');

  // `after` an index: only the newer ones; the typed client reads the same.
  const later = await harness.request('GET', `/v1/runs/${child.run_id}/messages?after=0`);
  expect(later.body.messages).toEqual(childMessages.slice(1));
  const client = new RatchetClient({ baseUrl: harness.url });
  expect(await client.runMessages(child.run_id, { after: 0 })).toEqual(later.body);

  const unknown = await harness.request('GET', `/v1/runs/${runId.slice(0, -4)}zzzz/messages`);
  expect(unknown.status).toBe(404);
  expect((await harness.request('GET', `/v1/runs/${runId}/messages?after=-1`)).status).toBe(400);
});
