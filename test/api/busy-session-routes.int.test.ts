import { afterEach, describe, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const script: Script = {
  rules: [
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

async function busySession(harness: ApiHarness): Promise<{ sessionId: string; runId: string }> {
  const created = await harness.request('POST', '/v1/sessions', { body: {} });
  const sessionId = created.body.id as string;
  const first = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { text: 'work long' },
  });
  expect(first.status).toBe(202);
  expect(first.body).toEqual({ delivery: 'started', run_id: expect.any(String), session_id: sessionId });
  const runId = first.body.run_id as string;
  await waitFor(
    async () => (await harness.harness.events(sessionId)).some((event) => event.kind === 'tool_call_start'),
    20_000,
    'the tool call',
  );
  return { sessionId, runId };
}

describe('POST /v1/sessions/:id/messages with on_busy', () => {
  it('reject answers 409 session_busy; an unknown policy is 400 naming the field', async () => {
    api = await ApiHarness.start({ script });
    const harness = api;
    const { sessionId, runId } = await busySession(harness);
    const busy = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'more' },
    });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({
      code: 'conflict',
      details: { reason: 'session_busy', active_run_id: runId },
    });
    const invalid = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'more', on_busy: 'later' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual([
      'on_busy',
    ]);
  });

  it('queue: listed in GET /v1/sessions/:id, cancellable with DELETE, bounded (409 naming the limit)', async () => {
    api = await ApiHarness.start({
      script,
      harness: { agent: { options: { max_iterations: 10, max_queued_messages: 2 } } },
    });
    const harness = api;
    const { sessionId, runId } = await busySession(harness);
    const queued: { message_id: string; run_id: string }[] = [];
    for (const text of ['one', 'two']) {
      const sent = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
        body: { text, on_busy: 'queue' },
      });
      expect(sent.status).toBe(202);
      queued.push(sent.body);
    }
    expect(queued[0]).toEqual({
      delivery: 'queued',
      run_id: expect.stringMatching(/^run_/),
      session_id: sessionId,
      message_id: expect.stringMatching(/^msg_/),
      position: 0,
    });
    const [one, two] = queued;
    if (!one || !two) throw new Error('not queued');
    const full = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'three', on_busy: 'queue' },
    });
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ details: { reason: 'queue_full', limit: 2 } });
    expect(full.body.error.message).toContain('options.max_queued_messages');

    const session = await harness.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.body.queued_messages).toEqual([
      { id: one.message_id, parts: [{ type: 'text', text: 'one' }], sent_at: expect.any(String) },
      { id: two.message_id, parts: [{ type: 'text', text: 'two' }], sent_at: expect.any(String) },
    ]);
    const removed = await harness.request('DELETE', `/v1/sessions/${sessionId}/queued/${one.message_id}`);
    expect(removed.status).toBe(204);
    const again = await harness.request('DELETE', `/v1/sessions/${sessionId}/queued/${one.message_id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.details).toMatchObject({ resource: 'queued_message' });

    await harness.request('POST', `/v1/runs/${runId}/cancel`, { body: {} });
    // The queued message's run exists once the cancelled run's end has been seen by a worker's sweep.
    await waitFor(
      async () => (await harness.request('GET', `/v1/runs/${two.run_id}`)).status === 200,
      20_000,
      'the queued run',
    );
    const next = await harness.request('GET', `/v1/runs/${two.run_id}/wait?timeout_s=20`);
    expect(next.body.status).toBe('completed');
    expect((await harness.request('GET', `/v1/runs/${one.run_id}`)).status).toBe(404);
  });

  it('steer and interrupt, through the typed client and POST /v1/runs with session_id', async () => {
    api = await ApiHarness.start({ script });
    const harness = api;
    const client = new RatchetClient({ baseUrl: harness.url });
    const { sessionId, runId } = await busySession(harness);
    const steered = await client.send(sessionId, { text: 'note this', on_busy: 'steer' });
    expect(steered).toMatchObject({ delivery: 'steered', run_id: runId, position: 0 });

    const submitted = await client.submit({ input: 'instead', session_id: sessionId, on_busy: 'interrupt' });
    expect(submitted).toMatchObject({
      delivery: 'interrupted',
      interrupted_run_id: runId,
      session_id: sessionId,
    });
    expect((await client.get(runId)).status).toBe('cancelled');
    const run = await client.wait(submitted.run_id, { timeoutS: 20 });
    expect(run.status).toBe('completed');
    // The steered message its run never read was queued when it was cancelled, and runs after the new one.
    await waitFor(
      async () => (await client.session(sessionId)).queued_messages.length === 0,
      20_000,
      'the queue',
    );
    const refused = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', session_id: sessionId, on_busy: 'queue', max_iterations: 2 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('on_busy: queue takes no max_iterations');
  });
});
