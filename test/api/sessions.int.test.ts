import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(script: Script = { default: { text: 'ok' } }): Promise<ApiHarness> {
  api = await ApiHarness.start({ script });
  return api;
}

async function createSession(harness: ApiHarness, body: unknown = {}): Promise<string> {
  const created = await harness.request('POST', '/v1/sessions', { body });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function waitFor(harness: ApiHarness, runId: string) {
  const response = await harness.request('GET', `/v1/runs/${runId}/wait?timeout_s=20`);
  expect(response.status).toBe(200);
  return response.body;
}

const unknownSession = 'ses_0000000000000000';

describe('sessions', () => {
  it('POST /v1/sessions creates a session (201) with the entry agent, or the one named', async () => {
    const harness = await start();
    const created = await harness.request('POST', '/v1/sessions', {
      body: { agent: 'agent', metadata: { user: 'u1' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^ses_/),
      agent: 'agent',
      metadata: { user: 'u1' },
      status: 'idle',
      active_run_id: null,
      usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, requests: 0, cost_usd: 0 },
      created_at: expect.any(String),
      queued_messages: [],
    });
    expect(created.headers.get('location')).toBe(`/v1/sessions/${created.body.id}`);

    // No body at all (content-type JSON, as every request that changes something) is a session with the
    // defaults.
    const bare = await fetch(`${harness.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(bare.status).toBe(201);
    expect(((await bare.json()) as { agent: string }).agent).toBe('agent');
  });

  it('POST /v1/sessions: an unknown agent is 404, a malformed body 400 naming each field', async () => {
    const harness = await start();
    const unknown = await harness.request('POST', '/v1/sessions', { body: { agent: 'nobody' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', details: { resource: 'agent' } });

    const invalid = await harness.request('POST', '/v1/sessions', {
      body: { agent: 7, metadata: 'x', colour: 'red' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('invalid_request');
    expect(invalid.body.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'agent',
      'colour',
      'metadata',
    ]);
  });

  it('GET /v1/sessions/:id shows the status and active run; unknown and malformed ids are 404', async () => {
    const harness = await start({ default: { text: 'ok', delay_ms: 300 } });
    const sessionId = await createSession(harness);
    const sent = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'hi' },
    });
    const active = await harness.request('GET', `/v1/sessions/${sessionId}`);
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({ id: sessionId, status: 'active', active_run_id: sent.body.run_id });
    await waitFor(harness, sent.body.run_id);
    const idle = await harness.request('GET', `/v1/sessions/${sessionId}`);
    expect(idle.body).toMatchObject({ status: 'idle', active_run_id: null });

    for (const id of [unknownSession, 'not-a-session']) {
      const missing = await harness.request('GET', `/v1/sessions/${id}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({ code: 'not_found', details: { resource: 'session' } });
    }
  });

  it('POST /v1/sessions/:id/messages starts a run (202); the chat carries over; ?after= pages it', async () => {
    const harness = await start({ replies: [{ text: 'first answer' }, { text: 'second answer' }] });
    const sessionId = await createSession(harness);
    const first = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'hello' },
    });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      delivery: 'started',
      run_id: expect.stringMatching(/^run_/),
      session_id: sessionId,
    });
    expect((await waitFor(harness, first.body.run_id)).result).toBe('first answer');

    const second = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: {
        parts: [
          { type: 'text', text: 'and this' },
          { type: 'image', url: 'https://example.com/cat.png' },
        ],
      },
    });
    expect(second.status).toBe(202);
    expect((await waitFor(harness, second.body.run_id)).result).toBe('second answer');

    const all = await harness.request('GET', `/v1/sessions/${sessionId}/messages`);
    expect(all.status).toBe(200);
    expect(
      all.body.messages.map((message: { index: number; role: string }) => [message.index, message.role]),
    ).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'user'],
      [3, 'assistant'],
    ]);
    expect(all.body.messages[2].parts[1]).toEqual({ type: 'image', url: 'https://example.com/cat.png' });

    const later = await harness.request('GET', `/v1/sessions/${sessionId}/messages?after=1`);
    expect(later.body.messages.map((message: { index: number }) => message.index)).toEqual([2, 3]);
    const bad = await harness.request('GET', `/v1/sessions/${sessionId}/messages?after=-3`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0]).toMatchObject({ location: 'querystring', path: 'after' });
    const missing = await harness.request('GET', `/v1/sessions/${unknownSession}/messages`);
    expect(missing.status).toBe(404);
  });

  it('POST /v1/sessions/:id/messages: 400 names invalid parts, 404 for an unknown session', async () => {
    const harness = await start();
    const sessionId = await createSession(harness);
    const cases: [unknown, string[]][] = [
      [{}, ['']],
      [{ text: 'a', parts: [{ type: 'text', text: 'b' }] }, ['']],
      [{ parts: [{ type: 'text' }] }, ['parts[0].text']],
      [
        {
          parts: [
            { type: 'text', text: 'ok' },
            { type: 'image', url: 'not a url' },
          ],
        },
        ['parts[1].url'],
      ],
      [
        { parts: [{ type: 'tool_result', tool_call_id: 'x', content: 'y', is_error: false }] },
        ['parts[0].type'],
      ],
      [{ parts: [] }, ['parts']],
    ];
    for (const [body, paths] of cases) {
      const response = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual(paths);
    }
    const missing = await harness.request('POST', `/v1/sessions/${unknownSession}/messages`, {
      body: { text: 'hi' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details.resource).toBe('session');
  });

  it('one active run per session: a second message while a run is active is 409 naming it', async () => {
    const harness = await start({ default: { text: 'slow', delay_ms: 300 } });
    const sessionId = await createSession(harness);
    const first = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'one' },
    });
    const second = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'two' },
    });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({
      code: 'conflict',
      details: { reason: 'session_busy', active_run_id: first.body.run_id },
    });
    const viaRuns = await harness.request('POST', '/v1/runs', {
      body: { input: 'three', session_id: sessionId },
    });
    expect(viaRuns.status).toBe(409);
    await waitFor(harness, first.body.run_id);
    const after = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'four' },
    });
    expect(after.status).toBe(202);
  });

  it('DELETE /v1/sessions/:id cancels the active run and deletes the session (204); then 404', async () => {
    const harness = await start({ default: { text: 'slow', delay_ms: 300 } });
    const sessionId = await createSession(harness);
    const sent = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'hi' },
    });
    const deleted = await harness.request('DELETE', `/v1/sessions/${sessionId}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await harness.request('GET', `/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await harness.request('GET', `/v1/runs/${sent.body.run_id}`)).status).toBe(404);
    expect((await harness.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await harness.request('DELETE', '/v1/sessions/whatever')).status).toBe(404);
  });
});

describe('questions', () => {
  const askingScript: Script = {
    replies: [
      {
        text: 'Let me ask.',
        tool_calls: [
          { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } },
        ],
      },
      { text: 'Blue it is.' },
    ],
  };

  async function waitForQuestion(harness: ApiHarness, sessionId: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const listed = await harness.request('GET', `/v1/sessions/${sessionId}/questions`);
      expect(listed.status).toBe(200);
      if (listed.body.questions.length > 0) return listed.body.questions;
      if (Date.now() > deadline) throw new Error('no question was asked');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('lists pending questions, shows them on the run, and resumes the run on respond (202)', async () => {
    const harness = await start(askingScript);
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'pick a colour' } });
    const sessionId = submitted.body.session_id;
    const [question] = await waitForQuestion(harness, sessionId);
    expect(question).toMatchObject({
      session_id: sessionId,
      run_id: submitted.body.run_id,
      kind: 'ask_user',
      question: 'Which colour?',
      options: ['red', 'blue'],
      status: 'pending',
    });
    expect(question).not.toHaveProperty('job_id');
    const run = await harness.request('GET', `/v1/runs/${submitted.body.run_id}`);
    expect(run.body.status).toBe('waiting_input');
    expect(run.body.pending_question).toMatchObject({ id: question.id });

    const wrongShape = await harness.request('POST', `/v1/sessions/${sessionId}/respond`, {
      body: { question_id: question.id, response: { decision: 'approve' } },
    });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error.code).toBe('invalid_request');

    const answered = await harness.request('POST', `/v1/sessions/${sessionId}/respond`, {
      body: { question_id: question.id, response: 'blue' },
    });
    expect(answered.status).toBe(202);
    expect(answered.body).toEqual({ session_id: sessionId, question_id: question.id });

    const again = await harness.request('POST', `/v1/sessions/${sessionId}/respond`, {
      body: { question_id: question.id, response: 'red' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { reason: 'question_closed' } });

    expect((await waitFor(harness, submitted.body.run_id)).result).toBe('Blue it is.');
    expect((await harness.request('GET', `/v1/sessions/${sessionId}/questions`)).body.questions).toEqual([]);
  });

  it('respond: unknown question or session is 404, a malformed body 400', async () => {
    const harness = await start();
    const sessionId = await createSession(harness);
    const unknownQuestion = await harness.request('POST', `/v1/sessions/${sessionId}/respond`, {
      body: { question_id: 'q_nope', response: 'yes' },
    });
    expect(unknownQuestion.status).toBe(404);
    expect(unknownQuestion.body.error.details.resource).toBe('question');
    const unknown = await harness.request('POST', `/v1/sessions/${unknownSession}/respond`, {
      body: { question_id: 'q_nope', response: 'yes' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details.resource).toBe('session');
    const malformed = await harness.request('POST', `/v1/sessions/${sessionId}/respond`, {
      body: { response: 5 },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'question_id',
      'response',
    ]);
    expect((await harness.request('GET', `/v1/sessions/${unknownSession}/questions`)).status).toBe(404);
  });
});
