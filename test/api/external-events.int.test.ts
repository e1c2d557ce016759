import { afterEach, describe, expect, it } from 'vitest';
import { publishEvent } from '../../src/redis/wait-store.js';
import { externalEventLimits } from '../../src/schemas/index.js';
import { ApiHarness } from './api-harness.js';

// POST /v1/events and POST /v1/runs/:id/signal through real HTTP, and the triggers they fire (decision 0033).
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const unknownRun = 'run_0000000000000000_0000000000';

describe('events over HTTP', () => {
  it('10 copies of one event id, sent at once, start one triggered run, whose input is the template filled in', async () => {
    api = await ApiHarness.start({
      script: { replies: [{ text: 'handled' }] },
      harness: {
        config: {
          triggers: [
            {
              event: 'ticket.opened',
              agent: 'agent',
              input: 'Triage ticket {{payload.ticket.id}}: {{payload.title}}',
            },
            { event: 'other', agent: 'agent', input: 'never' },
          ],
        },
      },
    });
    const send = () =>
      api?.request('POST', '/v1/events', {
        body: {
          event: 'ticket.opened',
          id: 'tk-9',
          payload: { ticket: { id: 9 }, title: 'printer on fire' },
        },
      });
    const answers = await Promise.all(Array.from({ length: 10 }, send));
    for (const answer of answers) expect(answer?.status).toBe(200);
    const runIds = new Set(answers.map((answer) => answer?.body.runs[0].run_id));
    expect(runIds.size).toBe(1);
    expect(answers.filter((answer) => answer?.body.runs[0].started)).toHaveLength(1);
    expect(answers.filter((answer) => !answer?.body.duplicate)).toHaveLength(1);
    for (const answer of answers) expect(answer?.body.runs).toHaveLength(1);

    const [runId] = runIds;
    const waited = await api.request('GET', `/v1/runs/${runId}/wait?timeout_s=30`);
    expect(waited.body.status).toBe('completed');
    const listed = await api.request('GET', '/v1/runs?agent=agent');
    expect(listed.body.runs).toHaveLength(1);
    const calls = api.harness.modelCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.messages.at(-1)?.text).toBe('Triage ticket 9: printer on fire');
  });

  it('an event recorded by a request that died before its trigger ran starts the run when sent again', async () => {
    api = await ApiHarness.start({
      script: { replies: [{ text: 'handled' }] },
      harness: {
        config: { triggers: [{ event: 'order.paid', agent: 'agent', input: 'Ship {{payload.order}}' }] },
      },
    });
    // What the first request recorded before it died: the event, without its trigger's run.
    const now = Date.now();
    const entry = {
      v: 1,
      id: 'paid-1',
      event: 'order.paid',
      payload: { order: 7 },
      at: new Date(now).toISOString(),
    };
    await publishEvent(api.harness.redis, api.harness.engine.space, {
      id: 'paid-1',
      event: 'order.paid',
      entryJson: JSON.stringify({ ...entry, expires_ms: now + 3_600_000 }),
      nowMs: now,
      retentionMs: 3_600_000,
      maxKept: 1000,
    });
    const again = await api.request('POST', '/v1/events', {
      body: { event: 'order.paid', id: 'paid-1', payload: { order: 7 } },
    });
    expect(again.body).toMatchObject({ duplicate: true, runs: [{ started: true }] });
    const waited = await api.request('GET', `/v1/runs/${again.body.runs[0].run_id}/wait?timeout_s=30`);
    expect(waited.body.status).toBe('completed');
    expect(api.harness.modelCalls()[0]?.messages.at(-1)?.text).toBe('Ship 7');
  });

  it('refuses a bad event, naming the field and the limit', async () => {
    api = await ApiHarness.start({ script: { replies: [] }, worker: false });
    const badName = await api.request('POST', '/v1/events', { body: { event: 'no spaces', payload: {} } });
    expect(badName.status).toBe(400);
    expect(JSON.stringify(badName.body.error.details)).toContain('event');
    const big = 'x'.repeat(externalEventLimits.payloadBytes);
    const tooBig = await api.request('POST', '/v1/events', { body: { event: 'big', payload: { big } } });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.message).toMatch(/payload is \d+ bytes as JSON; at most 65536 fit/);
  });

  it('a signal to an unknown run is 404; to a finished run 409', async () => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'done' }] } });
    const unknown = await api.request('POST', `/v1/runs/${unknownRun}/signal`, { body: { event: 'go' } });
    expect(unknown.status).toBe(404);
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'hi' } });
    await api.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=30`);
    const finished = await api.request('POST', `/v1/runs/${submitted.body.run_id}/signal`, {
      body: { event: 'go', payload: { a: 1 } },
    });
    expect(finished.status).toBe(409);
    expect(finished.body.error.details.reason).toBe('run_finished');
  });
});
