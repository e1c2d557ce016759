import { afterEach, describe, expect, it } from 'vitest';
import {
  RatchetApiError,
  RatchetClient,
  type RatchetClientEvent,
  type RatchetClientOptions,
} from '../../src/client/index.js';
import { runEndKinds } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { ApiHarness, type ApiHarnessOptions } from '../api/api-harness.js';
import { CuttingProxy } from './cutting-proxy.js';

// ratchet/client against the real API with an in-process worker on the real Redis (scripted model).

let api: ApiHarness | undefined;
let proxy: CuttingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await api?.close();
  api = undefined;
});

async function start(options: ApiHarnessOptions, client: Partial<RatchetClientOptions> = {}) {
  api = await ApiHarness.start(options);
  return { api, client: new RatchetClient({ baseUrl: api.url, ...client }) };
}

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

/** The session's whole event log as the API sends it (without the stored record's version). */
async function logOf(harness: ApiHarness, sessionId: string) {
  return (await harness.engine.readEvents(sessionId)).map(({ v: _v, ...event }) => event);
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function collect(events: AsyncIterable<RatchetClientEvent>): Promise<RatchetClientEvent[]> {
  const received: RatchetClientEvent[] = [];
  for await (const event of events) received.push(event);
  return received;
}

describe('RatchetClient against a live API', () => {
  it('submit, get, questions, answer, wait, state, tasks, notes, agents, health, session, cancel, deleteSession', async () => {
    const { api, client } = await start({
      script: {
        replies: [
          {
            tool_calls: [
              call('state_set', { key: 'plan', value: { steps: 3 } }),
              call('task_create', { title: 'write the intro', description: 'two sentences' }),
              call('note_write', { name: 'summary', content: 'all good' }),
            ],
          },
          { tool_calls: [call('ask_user', { question: 'Which colour?', options: ['red', 'blue'] })] },
          { text: 'Blue it is.' },
          { text: 'too slow', delay_ms: 30_000 },
        ],
      },
      harness: { agent: { toolboxes: ['test', 'utils', 'state', 'tasks', 'notes'] } },
    });

    expect(await client.health()).toEqual({ status: 'ok' });
    const agents = await client.agents();
    expect(agents.map((agent) => [agent.name, agent.kind])).toEqual([['agent', 'agent']]);

    const accepted = await client.submit({ input: 'pick a colour', metadata: { from: 'client test' } });
    expect(accepted).toEqual({
      run_id: expect.stringMatching(/^run_/),
      session_id: expect.stringMatching(/^ses_/),
    });
    const { run_id: runId, session_id: sessionId } = accepted;
    expect((await client.get(runId)).session_id).toBe(sessionId);

    const [question] = await until(async () => {
      const pending = await client.questions(sessionId);
      return pending.length > 0 ? pending : undefined;
    }, 'the question');
    expect(question).toMatchObject({ kind: 'ask_user', question: 'Which colour?', options: ['red', 'blue'] });
    expect((await client.get(runId)).status).toBe('waiting_input');
    const stillWaiting = await client.wait(runId, { timeoutS: 0 });
    expect(stillWaiting.pending_question?.id).toBe(question?.id);

    expect(await client.answer(sessionId, question?.id ?? '', 'blue')).toEqual({
      session_id: sessionId,
      question_id: question?.id,
    });
    const finished = await client.wait(runId, { timeoutS: 20 });
    expect(finished).toMatchObject({ status: 'completed', result: 'Blue it is.', iterations: 3 });
    expect(await client.questions(sessionId)).toEqual([]);

    expect(await client.state(sessionId)).toEqual({ plan: { steps: 3 } });
    expect(await client.tasks(sessionId)).toEqual([
      expect.objectContaining({ id: '1', title: 'write the intro', status: 'pending' }),
    ]);
    expect(await client.notes(sessionId)).toEqual([
      expect.objectContaining({ name: 'summary', scope: 'session', content: 'all good' }),
    ]);
    const session = await client.session(sessionId);
    expect(session).toMatchObject({
      id: sessionId,
      agent: 'agent',
      status: 'idle',
      metadata: { from: 'client test' },
    });
    expect(session.usage.requests).toBe(3);

    const slow = await client.submit({ input: 'take your time', session_id: sessionId });
    const cancelled = await client.cancel(slow.run_id, { reason: 'changed my mind' });
    expect(cancelled).toMatchObject({ id: slow.run_id, status: 'cancelled' });
    await expect(client.cancel(slow.run_id)).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      details: { reason: 'run_finished' },
    });

    await client.deleteSession(sessionId);
    await expect(client.session(sessionId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(api.url).toBeTruthy();
  });

  it('approve: approves with edited arguments; a decision the server refuses is a 400', async () => {
    const { api, client } = await start({
      script: { replies: [{ tool_calls: [call('charge_card', { amount: 42 })] }, { text: 'charged' }] },
      harness: { agent: { tools: { charge_card: { requires_approval: true } } } },
    });
    const { run_id: runId, session_id: sessionId } = await client.submit({ input: 'charge' });
    const question = await until(
      async () => (await client.get(runId)).pending_question ?? undefined,
      'approval',
    );
    expect(question).toMatchObject({
      kind: 'approval',
      tool: { name: 'charge_card', arguments: '{"amount":42}' },
    });

    // Edited arguments go with an approval only.
    const refused = await client
      .approve(sessionId, question.id, { decision: 'reject', arguments: { amount: 1 } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RatchetApiError);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request', message: /approve/ });

    await client.approve(sessionId, question.id, { decision: 'approve', arguments: { amount: 7 } });
    expect(await client.wait(runId, { timeoutS: 20 })).toMatchObject({
      status: 'completed',
      result: 'charged',
    });
    expect(api.harness.effects().map((effect) => effect.label)).toEqual(['charge 7']);
  });

  it('throws RatchetApiError with the wire envelope: 404 with its resource, 400 with details.issues, 401', async () => {
    const token = 'a-token-of-sixteen-or-more';
    const { api, client } = await start(
      { script: { replies: [{ text: 'unused' }] }, api: { tokens: [token] } },
      { token },
    );

    const missing = await client.get('run_nope').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(RatchetApiError);
    expect(missing).toMatchObject({
      name: 'RatchetApiError',
      status: 404,
      code: 'not_found',
      details: { resource: 'run' },
      fromEnvelope: true,
    });
    expect((missing as RatchetApiError).body.error.code).toBe('not_found');

    const invalid = (await client
      .submit({ input: 'x', max_iterations: 0, session_id: 'not-a-session' })
      .catch((error: unknown) => error)) as RatchetApiError;
    expect(invalid).toBeInstanceOf(RatchetApiError);
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(invalid.issues.map((issue) => `${issue.location} ${issue.path}`).sort()).toEqual([
      'body max_iterations',
      'body session_id',
    ]);
    expect(invalid.message).toMatch(/max_iterations/);

    const anonymous = new RatchetClient({ baseUrl: api.url });
    await expect(anonymous.agents()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    // /healthz needs no token.
    expect(await anonymous.health()).toEqual({ status: 'ok' });
  });
});

/** Many events: 12 iterations, each with two tool calls, the model taking a moment per reply. */
const manyEvents: Script = {
  replies: [
    ...Array.from({ length: 12 }, (_, index) => ({
      text: `step ${index}`,
      tool_calls: [call('add', { a: index, b: 1 }), call('add', { a: index, b: 2 })],
      delay_ms: 20,
    })),
    { text: 'all added', delay_ms: 20 },
  ],
};

describe('RatchetClient.events', () => {
  it('survives 20 connections cut mid-frame: the events equal the log, no gap, no duplicate', async () => {
    api = await ApiHarness.start({ script: manyEvents, harness: { maxIterations: 20 } });
    const address = new URL(api.url);
    // 1, 2 or 3 whole frames per connection, then half of the next one.
    proxy = await CuttingProxy.start({
      target: { host: address.hostname, port: Number(address.port) },
      framesBeforeCut: (index) => 1 + (index % 3),
      maxCuts: 20,
    });
    const direct = new RatchetClient({ baseUrl: api.url });
    const client = new RatchetClient({ baseUrl: proxy.url });
    const { run_id: runId, session_id: sessionId } = await direct.submit({ input: 'add things' });

    const received = await collect(client.events(sessionId, { untilRunEnds: runId, retryDelayMs: 10 }));

    expect(proxy.cuts).toBe(20);
    expect(proxy.connections).toBe(21);
    const log = await logOf(api, sessionId);
    expect(log.length).toBeGreaterThan(60);
    expect(received.map((event) => event.id)).toEqual(log.map((event) => event.id));
    expect(received).toEqual(log);
    expect(received.at(-1)).toMatchObject({
      kind: 'run_completed',
      run_id: runId,
      data: { result: 'all added' },
    });
  });

  it("untilRunEnds stops at that run's terminal event, though the stream goes on", async () => {
    const { api, client } = await start({
      script: { replies: [{ text: 'first' }, { text: 'second', delay_ms: 200 }] },
    });
    const first = await client.submit({ input: 'one' });
    await client.wait(first.run_id, { timeoutS: 20 });
    const second = await client.submit({ input: 'two', session_id: first.session_id });
    await client.wait(second.run_id, { timeoutS: 20 });

    const log = await logOf(api, first.session_id);
    const firstEnd = log.findIndex(
      (event) => event.run_id === first.run_id && runEndKinds.includes(event.kind),
    );
    expect(firstEnd).toBeLessThan(log.length - 1);
    const untilFirst = await collect(client.events(first.session_id, { untilRunEnds: first.run_id }));
    expect(untilFirst).toEqual(log.slice(0, firstEnd + 1));

    // Live: a third run, followed from after the second's end, ends the iterator with its own end.
    const third = await client.submit({ input: 'three', session_id: first.session_id });
    const live = await collect(
      client.events(first.session_id, { untilRunEnds: third.run_id, after: log.at(-1)?.id ?? '' }),
    );
    expect(live.at(-1)?.run_id).toBe(third.run_id);
    expect(runEndKinds).toContain(live.at(-1)?.kind);
    expect(live.every((event) => event.run_id === third.run_id)).toBe(true);
  });

  it('break closes the connection; an AbortSignal ends a following iterator without an error', async () => {
    api = await ApiHarness.start({ script: manyEvents, harness: { maxIterations: 20 } });
    const address = new URL(api.url);
    proxy = await CuttingProxy.start({
      target: { host: address.hostname, port: Number(address.port) },
      framesBeforeCut: () => 0,
      maxCuts: 0,
    });
    const direct = new RatchetClient({ baseUrl: api.url });
    const client = new RatchetClient({ baseUrl: proxy.url });
    const { run_id: runId, session_id: sessionId } = await direct.submit({ input: 'add things' });
    await direct.wait(runId, { timeoutS: 30 });

    const kinds: string[] = [];
    for await (const event of client.events(sessionId)) {
      kinds.push(event.kind);
      if (kinds.length === 3) break;
    }
    expect(kinds).toEqual(['run_started', 'agent_start', 'message_added']);
    expect(proxy.connections).toBe(1);
    await until(async () => (proxy?.openConnections === 0 ? true : undefined), 'the stream to close');

    // The session is idle: a following iterator waits for events until it is stopped.
    const stop = new AbortController();
    let count = 0;
    for await (const event of client.events(sessionId, { signal: stop.signal })) {
      count += 1;
      if (event.run_id === runId && runEndKinds.includes(event.kind)) stop.abort();
    }
    expect(count).toBe((await logOf(api, sessionId)).length);
    await until(async () => (proxy?.openConnections === 0 ? true : undefined), 'the stream to close');
  });
});
