import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/agents/:name/memory shows what an agent remembers across sessions (the memory toolbox), and the
// typed client reads it.
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

describe('GET /v1/agents/:name/memory', () => {
  it("shows the agent's notes and the deployment's, written in one session, from outside any", async () => {
    api = await ApiHarness.start({
      script: {
        replies: [
          {
            tool_calls: [
              call('memory_write', { name: 'style', content: 'prefers tabs' }),
              call('memory_write', { name: 'team', content: 'ships on Fridays', scope: 'deployment' }),
            ],
          },
          { text: 'remembered' },
        ],
      },
      harness: { agent: { toolboxes: ['memory'] } },
    });
    const started = await api.request('POST', '/v1/runs', { body: { input: 'remember this' } });
    const done = await api.request('GET', `/v1/runs/${started.body.run_id}/wait?timeout_s=20`);
    expect(done.body.status).toBe('completed');

    const memory = await api.request('GET', '/v1/agents/agent/memory');
    expect(memory.status).toBe(200);
    const writtenBy = {
      agent: 'agent',
      session_id: started.body.session_id,
      run_id: started.body.run_id,
    };
    expect(memory.body).toEqual({
      agent: 'agent',
      notes: [
        {
          name: 'style',
          scope: 'agent',
          content: 'prefers tabs',
          written_by: writtenBy,
          updated_at: expect.any(String),
          expires_at: expect.any(String),
        },
        {
          name: 'team',
          scope: 'deployment',
          content: 'ships on Fridays',
          written_by: writtenBy,
          updated_at: expect.any(String),
          expires_at: expect.any(String),
        },
      ],
    });
    // 90 days by default (tools.memory.retention_days).
    const note = memory.body.notes[0];
    expect(Date.parse(note.expires_at) - Date.parse(note.updated_at)).toBe(90 * 24 * 3600 * 1000);

    const client = new RatchetClient({ baseUrl: api.url });
    expect(await client.agentMemory('agent')).toEqual(memory.body);
    const unknown = await api.request('GET', '/v1/agents/nobody/memory');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    await expect(client.agentMemory('nobody')).rejects.toBeInstanceOf(RatchetApiError);
  });
});
