import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(options: { shards?: number } = {}): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: { replies: [{ text: 'done' }] },
    worker: false,
    ...(options.shards === undefined
      ? {}
      : {
          harness: {
            config: {
              redis: {
                url: inject('redisUrl'),
                prefix: `t-${randomBytes(6).toString('hex')}`,
                shards: options.shards,
              },
            },
          },
        }),
  });
  return api;
}

/** Every run the run index knows, newest first. */
async function allRuns(harness: ApiHarness): Promise<string[]> {
  const listed = await harness.request('GET', '/v1/runs?limit=100');
  expect(listed.status).toBe(200);
  return listed.body.runs.map((run: { id: string }) => run.id);
}

describe('idempotent submission (decision 0035)', () => {
  it.each([1, 4])(
    '20 identical racing POST /v1/runs with one Idempotency-Key start one run (%i shards)',
    async (shards) => {
      const harness = await start({ shards });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          harness.request('POST', '/v1/runs', {
            body: { input: 'charge the card once', metadata: { order: 7 } },
            headers: { 'idempotency-key': 'order-7-charge' },
          }),
        ),
      );
      const runIds = new Set(answers.map((answer) => answer.body.run_id));
      expect(runIds.size).toBe(1);
      const [runId] = [...runIds];
      // One answer started it (202); every other is a replay (200, marked).
      expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
      const replays = answers.filter((answer) => answer.status === 200);
      expect(replays).toHaveLength(19);
      for (const replay of replays) {
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body).toEqual({
          run_id: runId,
          session_id: answers[0]?.body.session_id,
          replayed: true,
        });
      }
      expect(await allRuns(harness)).toEqual([runId]);
      // A later retry, sequential, is a replay too.
      const later = await harness.request('POST', '/v1/runs', {
        body: { metadata: { order: 7 }, input: 'charge the card once' },
        headers: { 'idempotency-key': 'order-7-charge' },
      });
      expect(later.status).toBe(200);
      expect(later.body.run_id).toBe(runId);
    },
  );

  it('the body field works as the header does; both alike are one key; a new key starts a new run', async () => {
    const harness = await start();
    const first = await harness.request('POST', '/v1/runs', {
      body: { input: 'task', idempotency_key: 'k-1' },
    });
    expect(first.status).toBe(202);
    const again = await harness.request('POST', '/v1/runs', {
      body: { input: 'task', idempotency_key: 'k-1' },
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(again.status).toBe(200);
    expect(again.body.run_id).toBe(first.body.run_id);
    const other = await harness.request('POST', '/v1/runs', {
      body: { input: 'task', idempotency_key: 'k-2' },
    });
    expect(other.status).toBe(202);
    expect(other.body.run_id).not.toBe(first.body.run_id);
    // Without a key, the same body starts a run every time.
    const plain = await harness.request('POST', '/v1/runs', { body: { input: 'task' } });
    expect(plain.status).toBe(202);
    expect(new Set(await allRuns(harness)).size).toBe(3);
  });

  it('the same key with a different request is a 422 naming the key, and starts nothing', async () => {
    const harness = await start();
    const first = await harness.request('POST', '/v1/runs', {
      body: { input: 'pay 10 EUR' },
      headers: { 'idempotency-key': 'pay-1' },
    });
    expect(first.status).toBe(202);
    for (const body of [{ input: 'pay 1000 EUR' }, { input: 'pay 10 EUR', priority: 9 }]) {
      const reused = await harness.request('POST', '/v1/runs', {
        body,
        headers: { 'idempotency-key': 'pay-1' },
      });
      expect(reused.status).toBe(422);
      expect(reused.body.error).toMatchObject({
        code: 'unprocessable',
        message: expect.stringContaining('"pay-1"'),
        details: { reason: 'idempotency_key_reused', idempotency_key: 'pay-1', run_id: first.body.run_id },
      });
    }
    expect(await allRuns(harness)).toEqual([first.body.run_id]);
  });

  it('refuses a key that is not one, and a header and a body field that differ, with 400 naming them', async () => {
    const harness = await start();
    const spaced = await harness.request('POST', '/v1/runs', {
      body: { input: 'x' },
      headers: { 'idempotency-key': 'has space' },
    });
    expect(spaced.status).toBe(400);
    expect(spaced.body.error.details.issues).toEqual([
      expect.objectContaining({ location: 'headers', path: 'idempotency-key' }),
    ]);
    const long = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', idempotency_key: 'k'.repeat(256) },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toContain('idempotency_key');
    const differ = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', idempotency_key: 'a' },
      headers: { 'idempotency-key': 'b' },
    });
    expect(differ.status).toBe(400);
    expect(differ.body.error.message).toContain('idempotency_key');
    expect(await allRuns(harness)).toEqual([]);
  });

  it('POST /v1/sessions/:id/messages: 20 racing messages with one key start one run on the session', async () => {
    const harness = await start({ shards: 3 });
    const session = await harness.request('POST', '/v1/sessions', { body: {} });
    expect(session.status).toBe(201);
    const path = `/v1/sessions/${session.body.id}/messages`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        harness.request('POST', path, { body: { text: 'hello' }, headers: { 'idempotency-key': 'msg-1' } }),
      ),
    );
    const runIds = new Set(answers.map((answer) => answer.body.run_id));
    expect(runIds.size).toBe(1);
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(19).fill(200), 202]);
    // The session is busy with that run: a replay still answers with it, a new key is refused as busy.
    const replay = await harness.request('POST', path, { body: { text: 'hello', idempotency_key: 'msg-1' } });
    expect(replay.status).toBe(200);
    const busy = await harness.request('POST', path, { body: { text: 'hello', idempotency_key: 'msg-2' } });
    expect(busy.status).toBe(409);
    const reused = await harness.request('POST', path, { body: { text: 'bye', idempotency_key: 'msg-1' } });
    expect(reused.status).toBe(422);
    const chat = await harness.request('GET', `${path}`);
    expect(chat.body.messages).toHaveLength(1);
  });

  it("MCP's submit_task takes idempotency_key: a replay answers the same run, marked", async () => {
    const harness = await start();
    const mcp = await connectClient(httpTransport(harness.url));
    try {
      const first = await callTool(mcp, 'submit_task', { input: 'once', idempotency_key: 'mcp-1' });
      expect(first.isError, first.text).toBe(false);
      const again = await callTool(mcp, 'submit_task', { input: 'once', idempotency_key: 'mcp-1' });
      expect(again.value).toEqual({ ...first.value, replayed: true });
      const reused = await callTool(mcp, 'submit_task', { input: 'twice', idempotency_key: 'mcp-1' });
      expect(reused.isError).toBe(true);
      expect(reused.text).toContain('mcp-1');
      expect(await allRuns(harness)).toEqual([first.value.run_id]);
    } finally {
      await mcp.close();
    }
  });

  it('the key expires after api.idempotency_ttl_s', async () => {
    api = await ApiHarness.start({
      script: { replies: [{ text: 'done' }] },
      worker: false,
      harness: { config: { api: { idempotency_ttl_s: 1 } } },
    });
    const harness = api;
    const first = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', idempotency_key: 'short' },
    });
    expect(first.status).toBe(202);
    const deadline = Date.now() + 10_000;
    let after = first;
    while (Date.now() < deadline) {
      after = await harness.request('POST', '/v1/runs', { body: { input: 'x', idempotency_key: 'short' } });
      if (after.status === 202) break;
      expect(after.body.run_id).toBe(first.body.run_id);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(after.status).toBe(202);
    expect(after.body.run_id).not.toBe(first.body.run_id);
  });
});
