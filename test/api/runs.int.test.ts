import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(script: Script): Promise<ApiHarness> {
  api = await ApiHarness.start({ script });
  return api;
}

const unknownRun = 'run_0000000000000000_0000000000';

describe('runs', () => {
  it('POST /v1/runs submits a task on a new session (202); GET /v1/runs/:id shows the whole run', async () => {
    const harness = await start({
      replies: [
        {
          text: 'working',
          tool_calls: [{ name: 'report_progress', arguments: { message: 'half way', fraction: 0.5 } }],
        },
        { text: 'The answer.' },
      ],
    });
    const submitted = await harness.request('POST', '/v1/runs', {
      body: { input: 'What is it?', agent: 'agent', metadata: { source: 'test' } },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body).toEqual({
      run_id: expect.stringMatching(/^run_/),
      session_id: expect.stringMatching(/^ses_/),
    });
    const session = await harness.request('GET', `/v1/sessions/${submitted.body.session_id}`);
    expect(session.body.metadata).toEqual({ source: 'test' });

    await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=20`);
    const run = await harness.request('GET', `/v1/runs/${submitted.body.run_id}`);
    expect(run.status).toBe(200);
    expect(run.body).toEqual({
      id: submitted.body.run_id,
      session_id: submitted.body.session_id,
      agent: 'agent',
      parent_run_id: null,
      depth: 0,
      status: 'completed',
      queued_reason: null,
      result: 'The answer.',
      error: null,
      usage: expect.objectContaining({ requests: 2 }),
      cost_usd: 0,
      retry_waste: { calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      iterations: 2,
      progress: { fraction: 0.5, message: 'half way', at: expect.any(String) },
      pending_question: null,
      waiting: [],
      input_line: 'What is it?',
      created_at: expect.any(String),
      finished_at: expect.any(String),
      duration_ms: expect.any(Number),
      deadline_at: null,
      max_iterations: null,
      origin: null,
      retried_by: null,
      definition: { hash: expect.stringMatching(/^[0-9a-f]{32}$/), recorded_at: expect.any(String) },
      tenant: 'default',
      priority: 5,
      waiting_for: null,
      metadata: {
        execution_time_ms: expect.any(Number),
        iterations: 2,
        tool_calls: { count: 1, names: [expect.any(String)] },
        tokens: { input: expect.any(Number), output: expect.any(Number), total: expect.any(Number) },
        cost_usd: 0,
        confidence: null,
        partial: null,
        partial_results: {},
        contract: null,
        schema_version: null,
      },
    });
  });

  it('POST /v1/runs continues a given session, takes parts, and validates its body', async () => {
    const harness = await start({ default: { text: 'ok' } });
    const first = await harness.request('POST', '/v1/runs', { body: { input: 'one' } });
    await harness.request('GET', `/v1/runs/${first.body.run_id}/wait?timeout_s=20`);
    const second = await harness.request('POST', '/v1/runs', {
      body: { input: [{ type: 'text', text: 'two' }], session_id: first.body.session_id },
    });
    expect(second.status).toBe(202);
    expect(second.body.session_id).toBe(first.body.session_id);

    const unknownSession = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', session_id: 'ses_0000000000000000' },
    });
    expect(unknownSession.status).toBe(404);
    expect(unknownSession.body.error.details.resource).toBe('session');
    const unknownAgent = await harness.request('POST', '/v1/runs', { body: { input: 'x', agent: 'ghost' } });
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.body.error.details.resource).toBe('agent');

    const invalid = await harness.request('POST', '/v1/runs', {
      body: { input: [{ type: 'text' }], session_id: 'nope', extra: true },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.issues).toEqual([
      { location: 'body', path: 'input[0].text', message: expect.any(String) },
      { location: 'body', path: 'session_id', message: 'must be a session id (ses_…)' },
      { location: 'body', path: 'extra', message: 'unknown field' },
    ]);
    const missing = await harness.request('POST', '/v1/runs', { body: { input: 5 } });
    expect(missing.body.error.details.issues).toEqual([
      { location: 'body', path: 'input', message: 'expected string or array' },
    ]);
  });

  it('GET /v1/runs/:id is 404 for an unknown or malformed id', async () => {
    const harness = await start({ default: { text: 'ok' } });
    for (const id of [unknownRun, 'bogus']) {
      const response = await harness.request('GET', `/v1/runs/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: 'not_found', details: { resource: 'run' } });
    }
  });

  it('GET /v1/runs/:id/wait long-polls until the run is finished, or answers the current state at timeout', async () => {
    const harness = await start({ default: { text: 'slow', delay_ms: 400 } });
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'go' } });
    const early = await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=0`);
    expect(early.status).toBe(200);
    expect(['queued', 'running']).toContain(early.body.status);
    const done = await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=20`);
    expect(done.body).toMatchObject({ status: 'completed', result: 'slow' });

    const tooLong = await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=301`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details.issues[0]).toMatchObject({
      location: 'querystring',
      path: 'timeout_s',
    });
    expect((await harness.request('GET', `/v1/runs/${unknownRun}/wait?timeout_s=1`)).status).toBe(404);
  });

  it('POST /v1/runs/:id/cancel cancels (202); cancelling a finished run is 409, an unknown one 404', async () => {
    const harness = await start({ default: { text: 'slow', delay_ms: 400 } });
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'go' } });
    const cancelled = await harness.request('POST', `/v1/runs/${submitted.body.run_id}/cancel`, {
      body: { reason: 'changed my mind' },
    });
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ id: submitted.body.run_id, status: 'cancelled' });
    const events = await harness.engine.readEvents(submitted.body.session_id);
    expect(events.find((event) => event.kind === 'run_cancelled')?.data).toEqual({
      reason: 'changed my mind',
    });

    // No body at all, as a plain client sends it (content-type JSON: every request that changes something).
    const again = await fetch(`${harness.url}/v1/runs/${submitted.body.run_id}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      error: { code: 'conflict', details: { reason: 'run_finished', status: 'cancelled' } },
    });
    expect((await harness.request('POST', `/v1/runs/${unknownRun}/cancel`)).status).toBe(404);
    const badBody = await harness.request('POST', `/v1/runs/${submitted.body.run_id}/cancel`, {
      body: { reason: 3 },
    });
    expect(badBody.status).toBe(400);
  });
});

describe('long-poll', () => {
  it('GET /v1/runs/:id/wait holds until the run ends, or answers with the current state at the timeout', async () => {
    const harness = await start({ replies: [{ text: 'slow answer', delay_ms: 2500 }] });
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'wait for it' } });
    const runId = submitted.body.run_id as string;
    const started = Date.now();
    const early = await harness.request('GET', `/v1/runs/${runId}/wait?timeout_s=1`);
    expect(early.status).toBe(200);
    expect(early.body.status).not.toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const done = await harness.request('GET', `/v1/runs/${runId}/wait?timeout_s=20`);
    expect(done.body).toMatchObject({ status: 'completed', result: 'slow answer' });
  });
});

describe('a run deadline asked for one run', () => {
  it('POST /v1/runs takes a timeout_s up to the agent’s options.timeout_s and refuses more with a 400 naming the field', async () => {
    api = await ApiHarness.start({
      script: { replies: [{ text: 'slow', delay_ms: 30_000 }] },
      harness: { agent: { options: { max_iterations: 3, timeout_s: 60 } } },
    });
    const refused = await api.request('POST', '/v1/runs', { body: { input: 'go', timeout_s: 61 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('timeout_s');
    const zero = await api.request('POST', '/v1/runs', { body: { input: 'go', timeout_s: 0 } });
    expect(zero.status).toBe(400);
    const accepted = await api.request('POST', '/v1/runs', { body: { input: 'go', timeout_s: 1 } });
    expect(accepted.status).toBe(202);
    await api.request('GET', `/v1/runs/${accepted.body.run_id}/wait?timeout_s=20`);
    const run = await api.request('GET', `/v1/runs/${accepted.body.run_id}`);
    expect(run.body.status).toBe('failed');
    expect(run.body.error).toMatchObject({ code: 'deadline_exceeded' });
    expect(run.body.deadline_at).toEqual(expect.any(String));
  });
});
