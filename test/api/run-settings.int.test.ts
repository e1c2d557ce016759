import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from './api-harness.js';

// POST /v1/runs (and MCP submit_task, which takes the same body) may ask for less than the agent's config
// allows — max_iterations, timeout_s, budget — never more: more is a 400 naming the field and the limit.
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const loop = { tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] };

async function start() {
  api = await ApiHarness.start({
    script: { default: loop },
    harness: {
      agent: { options: { max_iterations: 6, timeout_s: 600 }, budget: { tokens: 100_000, cost_usd: 5 } },
    },
  });
  return api;
}

describe('per-run settings', () => {
  it('a run with fewer max_iterations than its agent stops there (max_iterations), and shows its limit', async () => {
    const harness = await start();
    const started = await harness.request('POST', '/v1/runs', { body: { input: 'loop', max_iterations: 2 } });
    expect(started.status).toBe(202);
    const run = await harness.request('GET', `/v1/runs/${started.body.run_id}/wait?timeout_s=20`);
    expect(run.body).toMatchObject({ status: 'failed', iterations: 2, max_iterations: 2 });
    expect(run.body.error.code).toBe('max_iterations');
  });

  it.each([
    [
      { max_iterations: 7 },
      'max_iterations',
      6,
      '7 is more than agent "agent" allows (options.max_iterations: 6); ask for 6 or less',
    ],
    [
      { timeout_s: 601 },
      'timeout_s',
      600,
      '601 is more than agent "agent" allows (options.timeout_s: 600); ask for 600 or less',
    ],
    [
      { budget: { tokens: 100_001 } },
      'budget.tokens',
      100_000,
      '100001 is more than agent "agent" allows (budget.tokens: 100000); ask for 100000 or less',
    ],
    [
      { budget: { cost_usd: 6 } },
      'budget.cost_usd',
      5,
      '6 is more than agent "agent" allows (budget.cost_usd: 5); ask for 5 or less',
    ],
  ])(
    'refuses %j above the config with 400 invalid_request naming the field and the limit',
    async (settings, path, limit, message) => {
      const harness = await start();
      const refused = await harness.request('POST', '/v1/runs', { body: { input: 'loop', ...settings } });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        error: {
          code: 'invalid_request',
          message: `${path}: ${message}`,
          details: { issues: [{ location: 'body', path, message }], limit },
        },
      });
    },
  );

  it('takes settings at or below the config', async () => {
    const harness = await start();
    const started = await harness.request('POST', '/v1/runs', {
      body: { input: 'loop', max_iterations: 6, timeout_s: 600, budget: { tokens: 100_000, cost_usd: 5 } },
    });
    expect(started.status).toBe(202);
  });
});
