import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiEngine } from '../../src/api/index.js';
import { type EventKind, eventKinds, runEndKinds } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { ApiHarness } from './api-harness.js';
import { SseClient } from './sse-client.js';

let api: ApiHarness | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await api?.close();
  api = undefined;
});

function connect(url: string, options: { lastEventId?: string; token?: string } = {}): SseClient {
  const client = new SseClient(url, eventKinds, options);
  clients.push(client);
  return client;
}

/** Three iterations with a tool call each, the model taking a moment per reply. */
const threeIterations: Script = {
  replies: [
    { text: 'one', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay_ms: 150 },
    { text: 'two', tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }], delay_ms: 150 },
    { text: 'done', delay_ms: 150 },
  ],
};

async function startRun(harness: ApiHarness): Promise<{ runId: string; sessionId: string }> {
  const response = await harness.request('POST', '/v1/runs', { body: { input: 'go' } });
  expect(response.status).toBe(202);
  return { runId: response.body.run_id, sessionId: response.body.session_id };
}

async function fullLog(harness: ApiHarness, sessionId: string) {
  return (await harness.engine.readEvents(sessionId)).map(({ v: _v, ...event }) => event);
}

/** A run's terminal event is its last one. */
const isLastOf = (runId: string) => (event: { data: { kind: string; run_id: string } }) =>
  runEndKinds.includes(event.data.kind as EventKind) && event.data.run_id === runId;

describe('GET /v1/sessions/:id/events', () => {
  it('resumes with Last-Event-ID after a disconnect mid-run: the events equal the log, no gap, no duplicate', async () => {
    api = await ApiHarness.start({ script: threeIterations });
    const { runId, sessionId } = await startRun(api);
    const url = `${api.url}/v1/sessions/${sessionId}/events`;

    const first = connect(url);
    await first.until(() => first.events.length >= 4);
    first.close();
    const received = [...first.events];
    const lastSeen = received.at(-1)?.id ?? '';
    // The run goes on while nobody listens (waited for, not slept on: a busy machine may be slower).
    expect(received.map((event) => event.type)).not.toContain('run_completed');
    const deadline = Date.now() + 30_000;
    while ((await fullLog(api, sessionId)).length <= received.length && Date.now() < deadline)
      await sleep(20);
    expect((await fullLog(api, sessionId)).length).toBeGreaterThan(received.length);

    const second = connect(url, { lastEventId: lastSeen });
    await second.until(() => second.events.some(isLastOf(runId)));
    received.push(...second.events);

    const log = await fullLog(api, sessionId);
    expect(received.map((event) => event.id)).toEqual(log.map((event) => event.id));
    expect(received.map((event) => event.data)).toEqual(log);
    expect(received.every((event) => event.type === event.data.kind && event.id === event.data.id)).toBe(
      true,
    );
    expect(received.map((event) => event.type)).toContain('run_completed');
  });

  it('resumes from ?after= as well, and Last-Event-ID wins over it', async () => {
    api = await ApiHarness.start({ script: threeIterations });
    const { runId, sessionId } = await startRun(api);
    const completed = await api.request('GET', `/v1/runs/${runId}/wait?timeout_s=10`);
    expect(completed.body.status).toBe('completed');
    const log = await fullLog(api, sessionId);
    const third = log[2]?.id ?? '';
    const fifth = log[4]?.id ?? '';
    const base = `${api.url}/v1/sessions/${sessionId}/events?follow=false`;

    const byQuery = connect(`${base}&after=${third}`);
    await byQuery.until(() => byQuery.events.some(isLastOf(runId)));
    expect(byQuery.events.map((event) => event.id)).toEqual(log.slice(3).map((event) => event.id));

    const byHeader = connect(`${base}&after=${third}`, { lastEventId: fifth });
    await byHeader.until(() => byHeader.events.some(isLastOf(runId)));
    expect(byHeader.events.map((event) => event.id)).toEqual(log.slice(5).map((event) => event.id));
  });

  it("follow=false ends after the active run's terminal event; a reconnection then gets 204", async () => {
    api = await ApiHarness.start({ script: threeIterations });
    const { runId, sessionId } = await startRun(api);
    const url = `${api.url}/v1/sessions/${sessionId}/events?follow=false`;

    const client = connect(url);
    // The end of the stream shows as an error event (an EventSource then reconnects).
    await client.until(() => client.errors.length > 0);
    const kinds = client.events.map((event) => event.type);
    // The terminal event is the run's last: a client that stops there has seen agent_end too.
    expect(kinds.slice(-2)).toEqual(['agent_end', 'run_completed']);
    expect(client.events.map((event) => event.id)).toEqual(
      (await fullLog(api, sessionId)).map((event) => event.id),
    );

    // Reconnecting after the last event: nothing to send, no run to wait for.
    const again = connect(url, { lastEventId: client.events.at(-1)?.id ?? '' });
    await again.until(() => again.errors.length > 0);
    expect(again.errors[0]?.code).toBe(204);
    expect(again.events).toEqual([]);
    expect(again.source.readyState).toBe(again.source.CLOSED);
    expect(runId).toMatch(/^run_/);
  });

  it('follow=false on a session without runs answers 204, and on a finished run sends the backlog', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    const created = await api.request('POST', '/v1/sessions', { body: {} });
    const empty = await fetch(`${api.url}/v1/sessions/${created.body.id}/events?follow=false`);
    expect(empty.status).toBe(204);

    const { runId, sessionId } = await startRun(api);
    await api.request('GET', `/v1/runs/${runId}/wait?timeout_s=10`);
    const client = connect(`${api.url}/v1/sessions/${sessionId}/events?follow=false`);
    await client.until(() => client.errors.length > 0);
    expect(client.events.map((event) => event.id)).toEqual(
      (await fullLog(api, sessionId)).map((event) => event.id),
    );
  });

  it('sends keep-alive comments while idle', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, api: { keepalive_ms: 100 } });
    const created = await api.request('POST', '/v1/sessions', { body: {} });
    const controller = new AbortController();
    const response = await fetch(`${api.url}/v1/sessions/${created.body.id}/events`, {
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body?.getReader();
    let text = '';
    const deadline = Date.now() + 2_000;
    while (!text.includes(': keep-alive\n\n') && Date.now() < deadline) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      text += Buffer.from(chunk.value).toString('utf8');
    }
    controller.abort();
    expect(text).toContain(': keep-alive\n\n');
  });

  it("closes the engine's follower when the client disconnects", async () => {
    let open = 0;
    const wrapEngine = (engine: ApiEngine): ApiEngine =>
      Object.assign(Object.create(engine) as ApiEngine, {
        followEvents(sessionId: string, options: { after?: string; signal: AbortSignal }) {
          const inner = engine.followEvents(sessionId, options);
          return (async function* () {
            open += 1;
            try {
              yield* inner;
            } finally {
              open -= 1;
            }
          })();
        },
      });
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, wrapEngine });
    const { runId, sessionId } = await startRun(api);
    const client = connect(`${api.url}/v1/sessions/${sessionId}/events`);
    await client.until(() => client.events.some(isLastOf(runId)));
    expect(open).toBe(1);
    client.close();
    const deadline = Date.now() + 5_000;
    while (open > 0 && Date.now() < deadline) await sleep(20);
    expect(open).toBe(0);
  });

  it('refuses an invalid Last-Event-ID or after with 400, and an unknown session with 404', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const created = await api.request('POST', '/v1/sessions', { body: {} });
    const badHeader = await api.request('GET', `/v1/sessions/${created.body.id}/events`, {
      headers: { 'last-event-id': 'nope' },
    });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.error.details.issues).toEqual([
      {
        location: 'headers',
        path: 'last-event-id',
        message: expect.stringMatching(/^must be an event id: /),
      },
    ]);
    const badQuery = await api.request('GET', `/v1/sessions/${created.body.id}/events?after=x&follow=maybe`);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'after',
      'follow',
    ]);
    const unknown = connect(`${api.url}/v1/sessions/ses_0000000000000000/events`);
    await unknown.until(() => unknown.errors.length > 0);
    expect(unknown.errors[0]?.code).toBe(404);
  });
});
