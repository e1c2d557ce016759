import { afterAll, beforeAll, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/connection.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';
import { ApiHarness } from './api-harness.js';

// The console's reads on a Redis Cluster of three masters (started here, stopped by pid): run list items
// with their records, the inbox and the age of its oldest question, a child run's chat and the queue board,
// with sessions on several masters.
// Each reads one shard per pipeline; a pipeline across shards would fail here (CROSSSLOT / another node).
let cluster: LocalCluster;
let api: ApiHarness | undefined;

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await cluster?.stop();
});

it('lists runs with their records, the inbox, a child chat and every shard on the queue board', async () => {
  api = await ApiHarness.start({
    script: { default: { text: 'unused' } },
    api: { admin_queues: true },
    harness: {
      agents: [
        {
          name: 'lead',
          script: {
            rules: [
              {
                when: { role: 'user' as const, contains: 'question' },
                reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
              },
              {
                when: { role: 'user' as const, contains: 'delegate' },
                reply: {
                  tool_calls: [
                    { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find it' } },
                  ],
                },
              },
            ],
            default: { text: 'done' },
          },
        },
        { name: 'helper', script: { default: { text: 'found it' } } },
      ],
      config: { redis: { cluster_nodes: cluster.nodes, prefix: 'consolereads', shards: 8 } },
    },
  });
  const harness = api;
  const inputs = ['hello', 'a question', 'please delegate'];
  const submitted: { run_id: string; session_id: string; input: string }[] = [];
  for (let index = 0; index < 12; index += 1) {
    const input = inputs[index % inputs.length] ?? 'hello';
    const response = await harness.request('POST', '/v1/runs', { body: { input, agent: 'lead' } });
    expect(response.status).toBe(202);
    submitted.push({ ...response.body, input });
  }
  const statusOf = async (runId: string) => (await harness.request('GET', `/v1/runs/${runId}`)).body.status;
  await waitFor(
    async () =>
      (await Promise.all(submitted.map(({ run_id }) => statusOf(run_id)))).every((status) =>
        ['completed', 'waiting_input'].includes(status),
      ),
    60_000,
    'every run settled',
  );
  const slots = (await harness.harness.redis.call('CLUSTER', 'SLOTS')) as [number, number, ...unknown[]][];
  const masters = new Set(
    submitted.map(({ session_id }) => {
      const slot = keySlot(sessionKeys(harness.harness.engine.space, session_id).session);
      return slots.findIndex(([from, to]) => slot >= from && slot <= to);
    }),
  );
  expect(masters.size).toBeGreaterThanOrEqual(2);

  const listed = await harness.request('GET', '/v1/runs?root=true&limit=100');
  expect(listed.status).toBe(200);
  expect(listed.body.runs).toHaveLength(12);
  for (const run of listed.body.runs) {
    expect(run.iterations).toBeGreaterThanOrEqual(1);
    expect(run.usage.requests).toBeGreaterThanOrEqual(1);
    expect(run.updated_at).toEqual(expect.any(String));
  }

  const asking = submitted.filter(({ input }) => input === 'a question').map(({ run_id }) => run_id);
  const inbox = await harness.request('GET', '/v1/questions');
  expect(inbox.status).toBe(200);
  expect(inbox.body.truncated).toBe(false);
  expect(inbox.body.questions.map((question: { run_id: string }) => question.run_id).sort()).toEqual(
    asking.sort(),
  );
  // The oldest pending question's age (GET /metrics): each shard's index and pending sets in one pipeline.
  const oldest = await harness.harness.engine.oldestPendingQuestions();
  const askedAt = Math.min(
    ...inbox.body.questions.map((question: { created_at: string }) => Date.parse(question.created_at)),
  );
  expect(oldest).toEqual({ ask_user: askedAt });

  const delegating = submitted.find(({ input }) => input === 'please delegate');
  const tree = await harness.request('GET', `/v1/runs/${delegating?.run_id}/tree`);
  const child = tree.body.runs[1];
  const chat = await harness.request('GET', `/v1/runs/${child.run_id}/messages`);
  expect(chat.status).toBe(200);
  expect(chat.body.chat_id).toBe(child.run_id);
  expect(JSON.stringify(chat.body.messages)).toContain('found it');

  const board = await harness.request('GET', '/admin/queues/api/queues');
  expect(board.status).toBe(200);
  expect(board.body.queues.map((queue: { name: string }) => queue.name).sort()).toEqual(
    Array.from({ length: 8 }, (_, shard) => `shard${shard}-steps`).sort(),
  );
});
