import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

// A run's timeout_s is bounded where it enters (365 days = 31536000 s): a larger one is a 400 naming the
// field and the limit, on POST /v1/runs and on MCP submit_task, never a run stored with a deadline its own
// schema refuses (which left the run queued and its reads answering 500) nor a 500 ("Invalid time value").
let api: ApiHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await api?.close();
  api = undefined;
});

const limit = '31536000 (365 days)';

describe('run timeout limits', () => {
  it.each([
    ['a million years in seconds', '1e12'],
    ['more than a Date holds', '1e20'],
    ['a number JSON reads as Infinity', '1e400'],
    ['one second over the limit', '31536001'],
  ])('POST /v1/runs refuses timeout_s of %s with 400 naming the field and the limit', async (_, value) => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'done' }] } });
    const refused = await api.request('POST', '/v1/runs', {
      rawBody: `{"input":"go","timeout_s":${value}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.details.issues).toContainEqual(
      expect.objectContaining({ path: 'timeout_s', message: expect.stringContaining(limit) }),
    );
    // Nothing was written: no key of a session exists.
    const { harness } = api;
    expect(await harness.redis.keys(`${harness.prefix}:*session*`)).toEqual([]);
  });

  it('takes a run timeout of exactly 365 days, and the run completes and reads back', async () => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'done' }] } });
    const started = await api.request('POST', '/v1/runs', { body: { input: 'go', timeout_s: 31_536_000 } });
    expect(started.status).toBe(202);
    const run = await api.request('GET', `/v1/runs/${started.body.run_id}/wait?timeout_s=20`);
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    expect(Date.parse(run.body.deadline_at)).toBeGreaterThan(Date.now() + 364 * 86_400_000);
  });

  it('MCP submit_task refuses timeout_s of 1e12 with an error naming the field and the limit', async () => {
    api = await ApiHarness.start({ script: { replies: [{ text: 'done' }] } });
    client = await connectClient(httpTransport(api.url));
    for (const timeout_s of [1e12, 1e20]) {
      const refused = await callTool(client, 'submit_task', { input: 'go', timeout_s });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain('timeout_s');
      expect(refused.text).toContain(limit);
    }
  });
});
