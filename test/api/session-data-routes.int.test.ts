import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from './api-harness.js';

// What agents wrote is readable from outside: GET /v1/sessions/:id/state, /tasks, /notes (with the API's
// tokens when configured), and the MCP tools of the same data (test/mcp-server).
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const token = 'a-token-of-sixteen-or-more';
const auth = { authorization: `Bearer ${token}` };
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

async function sessionWithData(): Promise<{ harness: ApiHarness; sessionId: string }> {
  api = await ApiHarness.start({
    script: {
      replies: [
        {
          tool_calls: [
            call('state_set', { key: 'plan', value: { steps: 3 } }),
            call('state_set', { key: 'scratch', value: 'dropped later' }),
            call('task_create', { title: 'write the intro', description: 'two sentences' }),
            call('note_write', { name: 'summary', content: 'all good' }),
            call('note_write', { name: 'private', content: 'mine only', scope: 'agent' }),
          ],
        },
        { tool_calls: [call('task_claim', { id: '1' }), call('state_delete', { key: 'scratch' })] },
        { text: 'done' },
      ],
    },
    api: { tokens: [token] },
    harness: { agent: { toolboxes: ['state', 'tasks', 'notes'] } },
  });
  const started = await api.request('POST', '/v1/runs', { body: { input: 'organise' }, headers: auth });
  expect(started.status).toBe(202);
  const done = await api.request('GET', `/v1/runs/${started.body.run_id}/wait?timeout_s=20`, {
    headers: auth,
  });
  expect(done.body.status).toBe('completed');
  return { harness: api, sessionId: started.body.session_id };
}

describe('session data routes', () => {
  it('GET state, tasks and notes show what the agents wrote', async () => {
    const { harness, sessionId } = await sessionWithData();
    const state = await harness.request('GET', `/v1/sessions/${sessionId}/state`, { headers: auth });
    expect(state.status).toBe(200);
    // A key an agent deleted is gone from the view.
    expect(state.body).toEqual({ state: { plan: { steps: 3 } } });

    const tasks = await harness.request('GET', `/v1/sessions/${sessionId}/tasks`, { headers: auth });
    expect(tasks.status).toBe(200);
    expect(tasks.body.tasks).toEqual([
      {
        id: '1',
        title: 'write the intro',
        description: 'two sentences',
        status: 'in_progress',
        assignee: { agent: 'agent', run_id: expect.stringMatching(/^run_/) },
        note: null,
        created_by: { agent: 'agent', run_id: expect.stringMatching(/^run_/) },
        updated_by: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);

    const notes = await harness.request('GET', `/v1/sessions/${sessionId}/notes`, { headers: auth });
    expect(notes.status).toBe(200);
    expect(notes.body.notes).toEqual([
      {
        name: 'private',
        scope: 'agent',
        agent: 'agent',
        content: 'mine only',
        written_by: { agent: 'agent', run_id: expect.stringMatching(/^run_/) },
        updated_at: expect.any(String),
      },
      {
        name: 'summary',
        scope: 'session',
        agent: null,
        content: 'all good',
        written_by: { agent: 'agent', run_id: expect.stringMatching(/^run_/) },
        updated_at: expect.any(String),
      },
    ]);
  });

  it('refuses a request without the token (401), and an unknown session is 404', async () => {
    const { harness, sessionId } = await sessionWithData();
    for (const what of ['state', 'tasks', 'notes']) {
      expect((await harness.request('GET', `/v1/sessions/${sessionId}/${what}`)).status).toBe(401);
      const unknown = await harness.request('GET', `/v1/sessions/ses_0000000000000000/${what}`, {
        headers: auth,
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'not_found', details: { resource: 'session' } });
      expect(
        (await harness.request('GET', `/v1/sessions/not-a-session/${what}`, { headers: auth })).status,
      ).toBe(404);
    }
  });

  it('an empty session has empty state, tasks and notes', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    const created = await api.request('POST', '/v1/sessions', { body: {} });
    const id = created.body.id;
    expect((await api.request('GET', `/v1/sessions/${id}/state`)).body).toEqual({ state: {} });
    expect((await api.request('GET', `/v1/sessions/${id}/tasks`)).body).toEqual({ tasks: [] });
    expect((await api.request('GET', `/v1/sessions/${id}/notes`)).body).toEqual({ notes: [] });
  });
});
