import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from './api-harness.js';

// Decision 0030 on the wire: GET /v1/runs/:id shows the run's definition, GET /v1/agents/:name the
// definitions unfinished runs of the agent use (what tells an operator a worker generation can be drained),
// POST /v1/runs/:id/upgrade asks one run to move to the current definition; the typed client does each.
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('definitions on the wire', () => {
  it('shows the definition of a run and of its agent, and takes an upgrade request until the run ends', async () => {
    api = await ApiHarness.start({
      script: {
        replies: [
          { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
          { text: 'blue' },
        ],
      },
    });
    const client = new RatchetClient({ baseUrl: api.url });
    const started = await client.submit({ input: 'pick a colour' });
    let waiting = await client.get(started.run_id);
    for (let tries = 0; waiting.status !== 'waiting_input' && tries < 400; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      waiting = await client.get(started.run_id);
    }
    expect(waiting.status).toBe('waiting_input');
    expect(waiting.definition).toEqual({
      hash: expect.stringMatching(/^[0-9a-f]{32}$/),
      recorded_at: expect.any(String),
    });

    const agent = await client.agent('agent');
    expect(agent).toEqual({
      name: 'agent',
      description: expect.any(String),
      kind: 'agent',
      definition: waiting.definition?.hash,
      definitions_in_use: [{ hash: waiting.definition?.hash, runs: 1, current: true }],
      truncated: false,
    });
    const unknown = await api.request('GET', '/v1/agents/nobody');
    expect(unknown.status).toBe(404);

    const asked = await api.request('POST', `/v1/runs/${started.run_id}/upgrade`);
    expect(asked.status).toBe(202);
    expect(asked.body.id).toBe(started.run_id);
    expect((await client.upgrade(started.run_id)).definition).toEqual(waiting.definition);

    const question = waiting.pending_question?.id ?? '';
    await client.answer(started.session_id, question, 'blue');
    const done = await client.wait(started.run_id, { timeoutS: 20 });
    expect(done.status).toBe('completed');
    // The request found nothing to change (the run was on the current definition already): answered by
    // the time the run took it again, with no agent_upgraded event (test/integration/agent-upgrades).
    expect(done.definition?.hash).toBe(waiting.definition?.hash);
    expect(Date.parse(done.definition?.recorded_at ?? '')).toBeGreaterThan(
      Date.parse(waiting.definition?.recorded_at ?? ''),
    );
    expect((await client.agent('agent')).definitions_in_use).toEqual([]);
    const finished = await api.request('POST', `/v1/runs/${started.run_id}/upgrade`);
    expect(finished.status).toBe(409);
    await expect(client.upgrade(started.run_id)).rejects.toBeInstanceOf(RatchetApiError);
  }, 60_000);
});
