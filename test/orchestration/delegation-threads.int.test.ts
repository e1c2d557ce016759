import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import { chatKey, runKeys } from '../../src/redis/keys.js';
import { threadChatId } from '../../src/workflows/thread-chats.js';
import { Harness } from '../helpers/harness.js';

// delegate_to_agent with a thread (or continue: true) continues an earlier conversation with the same agent in
// the same session: the child run works on the thread's chat, so the specialist keeps its history.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, arguments: args }] });

function toolResults(events: RatchetEvent[], runId: string) {
  return events.flatMap((event) =>
    event.kind === 'tool_call_end' && event.run_id === runId
      ? [{ is_error: event.data.is_error, content: event.data.content }]
      : [],
  );
}

describe('delegation threads', () => {
  it('a thread continues the conversation; continue: true is the default thread; no thread is a fresh child', async () => {
    harness = new Harness({
      agents: [
        {
          name: 'lead',
          script: {
            replies: [
              call('delegate_to_agent', { agent: 'specialist', task: 'My name is Ada.', thread: 'intro' }),
              call('delegate_to_agent', { agent: 'specialist', task: 'What is my name?', thread: 'intro' }),
              call('delegate_to_agent', { agent: 'specialist', task: 'What is my name?' }),
              call('delegate_to_agent', { agent: 'specialist', task: 'I like tea.', continue: true }),
              call('delegate_to_agent', { agent: 'specialist', task: 'What do I like?', continue: true }),
              call('spawn_agents', {
                tasks: [
                  { agent: 'specialist', task: 'a', thread: 'same' },
                  { agent: 'specialist', task: 'b', thread: 'same' },
                ],
              }),
              { text: 'done' },
            ],
          },
        },
        {
          name: 'specialist',
          // The scripted model answers by its position in the conversation: a continued thread moves it on.
          script: { replies: [{ text: 'first message of this conversation' }, { text: 'second message' }] },
        },
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');

    const results = toolResults(await harness.events(sessionId), runId);
    expect(results.slice(0, 5)).toEqual([
      { is_error: false, content: 'first message of this conversation' },
      { is_error: false, content: 'second message' },
      { is_error: false, content: 'first message of this conversation' },
      { is_error: false, content: 'first message of this conversation' },
      { is_error: false, content: 'second message' },
    ]);
    expect(results[5]).toMatchObject({ is_error: true });
    expect(results[5]?.content).toContain('two tasks continue thread "same" of agent "specialist" at once');

    // The thread's second delegation was sent the first one's exchange.
    const asked = harness
      .modelCalls()
      .filter((model) => model.agent === 'specialist')
      .map((model) =>
        model.messages.filter((message) => message.role !== 'system').map((message) => message.text),
      );
    expect(asked[1]).toEqual(['My name is Ada.', 'first message of this conversation', 'What is my name?']);
    expect(asked[2]).toEqual(['What is my name?']);

    // Both runs of the thread worked on one chat of the session, which goes with the session.
    const thread = threadChatId('specialist', 'intro');
    const chat = await harness.engine.readChat(sessionId, { chatId: thread });
    expect(chat.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const children = await harness.redis.smembers(runKeys(harness.engine.space, sessionId, runId).children);
    const records = await Promise.all(children.map((id) => harness?.engine.getRun(id)));
    expect(records.filter((record) => record?.chat_id === thread)).toHaveLength(2);
    const key = chatKey(harness.engine.space, sessionId, thread);
    expect(await harness.redis.exists(key)).toBe(1);
    expect(await harness.engine.deleteSession(sessionId)).toBe(true);
    expect(await harness.redis.exists(key)).toBe(0);
  });
});
