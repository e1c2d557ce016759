import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** "work N" makes the run call slow_echo for N ms; anything else is answered at once. */
const script: Script = {
  rules: [
    {
      when: { role: 'user', matches: '^work \\d+$' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 1500 } }],
      },
    },
    {
      when: { role: 'user', contains: 'work long' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 60_000 } }],
      },
    },
  ],
  default: { text: 'done' },
};

function busyHarness(options: Record<string, unknown> = {}): Harness {
  return new Harness({
    script,
    agent: { options: { max_iterations: 10, max_queued_messages: 25, ...options } },
  });
}

/** Waits until the run is inside its tool call (its reply recorded, the tool started). */
async function inToolCall(h: Harness, sessionId: string, runId: string): Promise<void> {
  await waitFor(
    async () =>
      (await h.events(sessionId)).some((event) => event.run_id === runId && event.kind === 'tool_call_start'),
    20_000,
    'the tool call',
  );
}

describe('a message to a busy session (on_busy)', () => {
  it('reject (the default): 409 session_busy naming the active run and the other policies', async () => {
    harness = new Harness({ script });
    await harness.startWorker();
    const session = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId: session.id, input: 'work 1' });
    expect(first.delivery).toBe('started');
    await expect(harness.engine.sendMessage({ sessionId: session.id, input: 'more' })).rejects.toMatchObject({
      code: 'session_busy',
      details: { active_run_id: first.runId },
      message: expect.stringContaining('on_busy: queue, steer or interrupt'),
    });
  });

  it('queue: FIFO, listed, cancellable, bounded; each becomes the next run when the active one ends', async () => {
    harness = busyHarness({ max_queued_messages: 3 });
    await harness.startWorker();
    const { id: sessionId } = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId, input: 'work 1', onBusy: 'queue' });
    expect(first.delivery).toBe('started');
    const sent = [];
    for (const text of ['second', 'third', 'fourth']) {
      sent.push(await harness.engine.sendMessage({ sessionId, input: text, onBusy: 'queue' }));
    }
    expect(sent.map((message) => message.delivery)).toEqual(['queued', 'queued', 'queued']);
    expect(sent.map((message) => ('position' in message ? message.position : -1))).toEqual([0, 1, 2]);
    await expect(
      harness.engine.sendMessage({ sessionId, input: 'fifth', onBusy: 'queue' }),
    ).rejects.toMatchObject({ code: 'queue_full', details: { limit: 3 } });
    const listed = (await harness.engine.getSession(sessionId))?.queued_messages ?? [];
    expect(listed.map((message) => textOf(message))).toEqual(['second', 'third', 'fourth']);
    const third = sent[1];
    if (!third || !('messageId' in third)) throw new Error('not queued');
    await harness.engine.cancelQueuedMessage(sessionId, third.messageId);
    await expect(harness.engine.cancelQueuedMessage(sessionId, third.messageId)).rejects.toMatchObject({
      code: 'queued_message_not_found',
    });

    const last = sent[2];
    if (!last) throw new Error('not sent');
    await waitFor(
      async () => (await harness?.engine.getRun(last.runId))?.status === 'completed',
      30_000,
      'the last queued run',
    );
    expect((await harness.engine.getRun(first.runId))?.status).toBe('completed');
    expect((await harness.engine.getRun(sent[0]?.runId ?? ''))?.status).toBe('completed');
    expect(await harness.engine.getRun(third.runId)).toBeUndefined();
    const chat = await harness.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'user').map(textOf)).toEqual([
      'work 1',
      'second',
      'fourth',
    ]);
    const session = await harness.engine.getSession(sessionId);
    expect(session?.queued_messages).toEqual([]);
    expect(session?.active_run_id).toBeNull();
    const queued = (await harness.events(sessionId)).filter((event) => event.kind === 'message_queued');
    expect(queued.map((event) => event.kind === 'message_queued' && event.data.position)).toEqual([0, 1, 2]);
  });

  it('steer: 20 racing messages each appear once, in the order accepted, in the next model request', async () => {
    harness = busyHarness();
    await harness.startWorker();
    const { id: sessionId } = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId, input: 'work 1' });
    await inToolCall(harness, sessionId, first.runId);
    const texts = Array.from({ length: 20 }, (_, index) => `steer ${index}`);
    const sent = await Promise.all(
      texts.map((text) => harness?.engine.sendMessage({ sessionId, input: text, onBusy: 'steer' })),
    );
    expect(sent.every((message) => message?.delivery === 'steered' && message.runId === first.runId)).toBe(
      true,
    );
    const byPosition = sent
      .map((message, index) => ({
        text: texts[index],
        position: message && 'position' in message ? message.position : -1,
      }))
      .sort((a, b) => a.position - b.position);
    expect(byPosition.map((entry) => entry.position)).toEqual(texts.map((_, index) => index));

    const run = await harness.engine.waitForRun(first.runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const calls = harness.modelCalls().filter((call) => call.run_id === first.runId);
    expect(calls.map((call) => call.iteration)).toEqual([1, 2]);
    const steeredInRequest = (calls[1]?.messages ?? [])
      .filter((message) => message.role === 'user' && message.text.startsWith('steer '))
      .map((message) => message.text);
    expect(steeredInRequest).toEqual(byPosition.map((entry) => entry.text));
    // After the tool result, never inside the batch.
    const roles = (calls[1]?.messages ?? []).map((message) => message.role);
    expect(roles.indexOf('tool')).toBeLessThan(
      roles.findIndex((_, index) => calls[1]?.messages[index]?.text === 'steer 0'),
    );
    const steeredEvents = (await harness.events(sessionId)).filter(
      (event) => event.kind === 'message_steered',
    );
    expect(steeredEvents).toHaveLength(20);
    expect((await harness.engine.getSession(sessionId))?.queued_messages).toEqual([]);
  });

  it('steer: a run that ends before its next model call leaves the message queued, and it runs next', async () => {
    harness = busyHarness();
    await harness.startWorker();
    const { id: sessionId } = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId, input: 'work long' });
    await inToolCall(harness, sessionId, first.runId);
    const steered = await harness.engine.sendMessage({ sessionId, input: 'after all', onBusy: 'steer' });
    expect(steered.delivery).toBe('steered');
    await harness.engine.cancelRun(first.runId, 'stop');
    if (!('messageId' in steered)) throw new Error('not steered');
    await waitFor(
      async () =>
        (await harness?.events(sessionId))?.some((event) => event.kind === 'run_completed') ?? false,
      30_000,
      'the queued run',
    );
    const events = await harness.events(sessionId);
    const queued = events.find((event) => event.kind === 'message_queued');
    expect(queued).toMatchObject({
      run_id: first.runId,
      data: { message_id: steered.messageId, reason: 'run_ended' },
    });
    // The cancelled run's terminal event stays its last.
    const ofFirst = events.filter((event) => event.run_id === first.runId);
    expect(ofFirst.at(-1)?.kind).toBe('run_cancelled');
    const chat = await harness.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'user').map(textOf)).toEqual(['work long', 'after all']);
  });

  it('steer does not answer a pending question', async () => {
    harness = new Harness({
      script: {
        replies: [
          { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
          { text: 'done' },
        ],
      },
      agent: { options: { max_iterations: 10 } },
    });
    await harness.startWorker();
    const { id: sessionId } = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId, input: 'paint' });
    await waitFor(
      async () => (await harness?.engine.getRun(first.runId))?.status === 'waiting_input',
      20_000,
      'the question',
    );
    await harness.engine.sendMessage({ sessionId, input: 'also blue', onBusy: 'steer' });
    const [question] = await harness.engine.listQuestions(sessionId);
    expect(question?.status).toBe('pending');
    await harness.engine.respond(sessionId, question?.id ?? '', 'red');
    const run = await harness.engine.waitForRun(first.runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const chat = await harness.transcript(sessionId);
    expect(chat.map((message) => `${message.role}:${textOf(message)}`)).toEqual([
      'user:paint',
      'assistant:',
      'tool:',
      'user:also blue',
      'assistant:done',
    ]);
  });

  it('interrupt: the active run is cancelled and the new one started, in one write', async () => {
    harness = busyHarness();
    await harness.startWorker();
    const { id: sessionId } = await harness.engine.createSession({});
    const first = await harness.engine.sendMessage({ sessionId, input: 'work long' });
    await inToolCall(harness, sessionId, first.runId);
    const started = Date.now();
    const sent = await harness.engine.sendMessage({ sessionId, input: 'instead', onBusy: 'interrupt' });
    expect(sent).toMatchObject({ delivery: 'interrupted', interruptedRunId: first.runId });
    const old = await harness.engine.getRun(first.runId);
    expect(old?.status).toBe('cancelled');
    const run = await harness.engine.waitForRun(sent.runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    // The slow call (60 s) was aborted, not waited for.
    expect(Date.now() - started).toBeLessThan(20_000);
    const kinds = (await harness.events(sessionId)).map(
      (event) => `${event.run_id === first.runId ? 'old' : 'new'}:${event.kind}`,
    );
    expect(kinds.indexOf('old:run_cancelled')).toBeLessThan(kinds.indexOf('new:run_started'));
  });
});
