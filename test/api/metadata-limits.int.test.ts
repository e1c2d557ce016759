import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { keyPattern } from '../../src/redis/keys.js';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

// What one client may store on a session: 40 sessions with 1 MB of metadata each were all accepted and kept
// for the retention window (30 days). Session metadata is bounded by api.max_metadata_bytes on every way
// in: POST /v1/sessions, POST /v1/runs (a new session), a fork, and MCP's submit_task and fork_run.

let api: ApiHarness | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await api?.close();
  api = undefined;
});

/** Metadata of about `bytes` bytes as JSON. */
const metadataOf = (bytes: number) => ({ blob: 'm'.repeat(bytes - '{"blob":""}'.length) });

/** Bytes stored under the harness's prefix (every key's serialized size). */
async function storedBytes(harness: ApiHarness): Promise<number> {
  const redis = harness.harness.redis;
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(
      cursor,
      'MATCH',
      keyPattern(harness.harness.engine.space),
      'COUNT',
      1000,
    );
    cursor = next;
    for (const key of keys) total += (await redis.memory('USAGE', key)) ?? 0;
  } while (cursor !== '0');
  return total;
}

const refusal = (limit: number) => ({
  code: 'invalid_request',
  message: expect.stringContaining(`more than api.max_metadata_bytes (${limit}) allows`),
  details: {
    issues: [
      {
        location: 'body',
        path: 'metadata',
        message: expect.stringMatching(
          new RegExp(`^\\d+ bytes as JSON, more than api\\.max_metadata_bytes \\(${limit}\\) allows`),
        ),
      },
    ],
    limit,
  },
});

describe('session metadata per client', () => {
  it('40 sessions of 1 MB of metadata are refused with 400 naming the field, the limit and the setting; nothing is stored', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'done' } } });
    const before = await storedBytes(api);
    const huge = metadataOf(1_000_000);
    const answers = [];
    for (let index = 0; index < 40; index++) {
      answers.push(await api.request('POST', '/v1/sessions', { body: { metadata: huge } }));
    }
    // Before the bound, each was a 201 and its megabyte was kept for 30 days.
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(400));
    expect(answers[0]?.body.error).toEqual(refusal(16_384));
    const run = await api.request('POST', '/v1/runs', { body: { input: 'hello', metadata: huge } });
    expect(run.status).toBe(400);
    expect(run.body.error).toEqual(refusal(16_384));
    expect((await api.request('GET', '/v1/sessions')).body.sessions).toEqual([]);
    // Nothing of the 41 megabytes reached Redis.
    expect((await storedBytes(api)) - before).toBeLessThan(100_000);

    // At the limit it is stored whole.
    const fits = metadataOf(16_384);
    const created = await api.request('POST', '/v1/sessions', { body: { metadata: fits } });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual(fits);
  });

  it('api.max_metadata_bytes sets the bound for sessions, runs, forks and the MCP tools', async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'done' } },
      harness: { config: { api: { max_metadata_bytes: 100 } } },
    });
    const over = metadataOf(101);
    const small = metadataOf(100);
    expect((await api.request('POST', '/v1/sessions', { body: { metadata: over } })).body.error).toEqual(
      refusal(100),
    );
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'hello', metadata: small } });
    expect(submitted.status).toBe(202);
    expect((await api.engine.waitForRun(submitted.body.run_id, { timeoutMs: 30_000 })).status).toBe(
      'completed',
    );
    const session = await api.request('GET', `/v1/sessions/${submitted.body.session_id}`);
    expect(session.body.metadata).toEqual(small);

    const fork = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 1, metadata: over },
    });
    expect(fork.status).toBe(400);
    expect(fork.body.error).toEqual(refusal(100));

    mcp = await connectClient(httpTransport(api.url));
    const task = await callTool(mcp, 'submit_task', { input: 'hello', metadata: over });
    expect(task.isError).toBe(true);
    expect(task.text).toContain('api.max_metadata_bytes (100)');
    const forked = await callTool(mcp, 'fork_run', {
      run_id: submitted.body.run_id,
      at_iteration: 1,
      metadata: over,
    });
    expect(forked.isError).toBe(true);
    expect(forked.text).toContain('api.max_metadata_bytes (100)');
    // Only the one session with the small metadata exists.
    expect((await api.request('GET', '/v1/sessions')).body.sessions).toHaveLength(1);
  });
});
