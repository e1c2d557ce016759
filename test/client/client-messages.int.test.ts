import { afterEach, describe, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from '../api/api-harness.js';

// ratchet/client's read of a session's chat (the console's transcript starts from it) against the real API
// and a worker on the real Redis, with the scripted model.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('client.messages', () => {
  it("reads the session's chat oldest first with each message's index, and only the newer ones after an index", async () => {
    api = await ApiHarness.start({
      script: {
        replies: [{ tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' }],
      },
    });
    const client = new RatchetClient({ baseUrl: api.url });
    const { run_id: runId, session_id: sessionId } = await client.submit({ input: 'What is 2 + 3?' });
    expect((await client.wait(runId, { timeoutS: 60 })).status).toBe('completed');

    const messages = await client.messages(sessionId);
    const conversation = messages.filter((message) => message.role !== 'system');
    expect(conversation.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages.map((message) => message.index)).toEqual(messages.map((_, index) => index));
    expect(conversation[0]?.parts).toEqual([{ type: 'text', text: 'What is 2 + 3?' }]);
    expect(conversation[1]?.parts).toContainEqual(
      expect.objectContaining({ type: 'tool_call', name: 'add' }),
    );
    expect(conversation[1]?.id).toBe(`${runId}-i1-a`);
    expect(conversation.at(-1)?.parts).toEqual([{ type: 'text', text: 'It is 5.' }]);

    const last = messages.at(-1)?.index ?? 0;
    expect((await client.messages(sessionId, { after: last - 1 })).map((message) => message.index)).toEqual([
      last,
    ]);
    expect(await client.messages(sessionId, { after: last })).toEqual([]);
  });
});
