import { afterEach, expect, it } from 'vitest';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('sums usage and cost per run, per session and per agent, from the price table', async () => {
  const usage = { input_tokens: 1000, output_tokens: 100 };
  api = await ApiHarness.start({
    script: {
      replies: [
        { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], usage },
        { text: 'three', usage },
        { text: 'again', usage },
      ],
    },
    // $2 per million input tokens, $10 per million output tokens: each request costs $0.003.
    harness: { config: { pricing: { test: { input: 2, output: 10 } } } },
  });
  const first = await api.request('POST', '/v1/runs', { body: { input: 'one' } });
  const firstRun = await api.request('GET', `/v1/runs/${first.body.run_id}/wait?timeout_s=20`);
  expect(firstRun.body.usage).toMatchObject({ input_tokens: 2000, output_tokens: 200, requests: 2 });
  expect(firstRun.body.cost_usd).toBeCloseTo(0.006, 10);

  const second = await api.request('POST', `/v1/sessions/${first.body.session_id}/messages`, {
    body: { text: 'two' },
  });
  await api.request('GET', `/v1/runs/${second.body.run_id}/wait?timeout_s=20`);
  const session = await api.request('GET', `/v1/sessions/${first.body.session_id}`);
  expect(session.body.usage).toMatchObject({ input_tokens: 3000, output_tokens: 300, requests: 3 });
  expect(session.body.usage.cost_usd).toBeCloseTo(0.009, 10);

  const agents = await api.request('GET', '/v1/agents');
  expect(agents.body.agents[0].usage).toMatchObject({ input_tokens: 3000, requests: 3 });
});
