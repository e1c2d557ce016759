import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/connection.js';
import { sessionKeys, shardPrefix } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/runs/:id/tree, /steps and /v1/system on a Redis Cluster of three masters (started here, stopped by
// pid), with the API and a worker on it: each run's reads go to the master of its session, and /v1/system
// gathers the queues of shards on every master.
let cluster: LocalCluster;
let api: ApiHarness | undefined;

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await cluster?.stop();
});

interface TreeNode {
  run_id: string;
  parent_run_id: string | null;
  agent: string;
  status: string;
  depth: number;
  children: number;
  iterations: number;
}

describe('run inspection on a Redis Cluster of three masters', () => {
  it('gives the tree and steps of runs on every master, and the system state of every shard', async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'unused' } },
      harness: {
        agents: [
          {
            name: 'lead',
            script: {
              rules: [
                {
                  when: { role: 'user', contains: 'question' },
                  reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
                },
                {
                  when: { role: 'user', contains: 'delegate' },
                  reply: {
                    text: 'adding and delegating',
                    tool_calls: [
                      { name: 'add', arguments: { a: 2, b: 3 } },
                      { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'help' } },
                    ],
                  },
                },
              ],
              default: { text: 'done' },
            },
          },
          { name: 'helper', script: { default: { text: 'helped' } } },
        ],
        config: { redis: { cluster_nodes: cluster.nodes, prefix: 'inspect', shards: 8 } },
      },
    });
    const harness = api;
    const slots = (await harness.harness.redis.call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number],
    ][];
    const masterOfKey = (key: string) => {
      const slot = keySlot(key);
      return slots.findIndex(([from, to]) => slot >= from && slot <= to);
    };
    const space = harness.harness.engine.space;
    const masterOf = (sessionId: string) => masterOfKey(sessionKeys(space, sessionId).session);
    // The eight shards' queues are on all three masters, so /v1/system reads each of them.
    expect(
      new Set(Array.from({ length: 8 }, (_, shard) => masterOfKey(`${shardPrefix(space, shard)}:steps`)))
        .size,
    ).toBe(3);

    // Runs in new sessions (random ids) until they are on two masters at least: almost always after two.
    const submitted: { run_id: string; session_id: string }[] = [];
    while (submitted.length < 4 || new Set(submitted.map((run) => masterOf(run.session_id))).size < 2) {
      if (submitted.length >= 24) throw new Error('24 random sessions all on one master');
      const response = await harness.request('POST', '/v1/runs', {
        body: { input: 'please delegate', agent: 'lead' },
      });
      expect(response.status).toBe(202);
      submitted.push(response.body);
    }
    await waitFor(
      async () => {
        const statuses = await Promise.all(
          submitted.map(
            async ({ run_id }) => (await harness.request('GET', `/v1/runs/${run_id}`)).body.status,
          ),
        );
        return statuses.every((status) => status === 'completed');
      },
      60_000,
      'every run completed',
    );

    const childIds: string[] = [];
    for (const { run_id } of submitted) {
      const tree = await harness.request('GET', `/v1/runs/${run_id}/tree`);
      expect(tree.status, `tree of ${run_id}`).toBe(200);
      expect(tree.body.truncated).toBe(false);
      const runs = tree.body.runs as TreeNode[];
      expect(runs.map((run) => [run.agent, run.depth, run.children, run.status, run.iterations])).toEqual([
        ['lead', 0, 1, 'completed', 2],
        ['helper', 1, 0, 'completed', 1],
      ]);
      const [root, child] = runs;
      expect(root).toMatchObject({ run_id, parent_run_id: null });
      expect(child?.parent_run_id).toBe(run_id);
      childIds.push(child?.run_id ?? '');

      const steps = await harness.request('GET', `/v1/runs/${run_id}/steps`);
      expect(steps.status, `steps of ${run_id}`).toBe(200);
      expect(steps.body).toMatchObject({ run_id, agent: 'lead', status: 'completed', iterations: 2 });
      expect(steps.body.next_from).toBeNull();
      const [first, second] = steps.body.steps;
      expect(steps.body.steps).toHaveLength(2);
      expect(first).toMatchObject({ iteration: 1, state: 'committed', decision: 'tools' });
      expect(first.tool_calls.map((call: { name: string }) => call.name)).toEqual([
        'add',
        'delegate_to_agent',
      ]);
      const [add, delegate] = first.tool_calls;
      expect(JSON.parse(add.arguments.text)).toEqual({ a: 2, b: 3 });
      expect(add.result.text).toContain('5');
      expect(add.ledger).toBe('done');
      expect(delegate.result.text).toContain('helped');
      expect(second).toMatchObject({ iteration: 2, state: 'committed', decision: 'final' });

      // The child's own timeline, read from its parent's session on the same master.
      const childSteps = await harness.request('GET', `/v1/runs/${child?.run_id}/steps`);
      expect(childSteps.status).toBe(200);
      expect(childSteps.body).toMatchObject({ agent: 'helper', status: 'completed', iterations: 1 });
      expect(childSteps.body.steps.map((step: { decision: string }) => step.decision)).toEqual(['final']);
    }
    expect(new Set(childIds).size).toBe(submitted.length);

    // A run parked on a question: its tool step waits in the delayed set of its shard's queue.
    const asking = (
      await harness.request('POST', '/v1/runs', { body: { input: 'a question', agent: 'lead' } })
    ).body as { run_id: string };
    await waitFor(
      async () => (await harness.request('GET', `/v1/runs/${asking.run_id}`)).body.status === 'waiting_input',
      30_000,
      'the run waiting for its answer',
    );
    const parked = await harness.request('GET', `/v1/runs/${asking.run_id}/steps`);
    expect(parked.body.steps[0].tool_calls.map((call: { name: string }) => call.name)).toEqual(['ask_user']);

    const system = await harness.request('GET', '/v1/system');
    expect(system.status).toBe(200);
    expect(system.body.workers).toHaveLength(1);
    expect(system.body.workers[0]).toMatchObject({ pid: process.pid, alive: true });
    expect(system.body.workers[0].shards).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Every shard's queue, on whichever master holds it: only the parked step is left, on one shard.
    const queues = system.body.queues as {
      shard: number;
      counts: Record<string, number>;
      by_kind: Record<string, Record<string, number>>;
    }[];
    expect(queues.map((queue) => queue.shard)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const holding = queues.filter((queue) => queue.counts.delayed === 1);
    expect(holding).toHaveLength(1);
    // Parked (its journal, read on the master of its shard, says so), not a retry waiting for its backoff.
    expect(holding[0]?.by_kind).toEqual({ tool: { delayed: 1, parked: 1 } });
    for (const queue of queues)
      expect(queue.counts, `shard ${queue.shard}`).toMatchObject({
        waiting: 0,
        active: 0,
        delayed: queue === holding[0] ? 1 : 0,
        failed: 0,
        waiting_children: 0,
        prioritized: 0,
      });
    const byStatus = system.body.runs_by_status as Record<string, number>;
    const total = submitted.length * 2 + 1;
    expect(byStatus.completed).toBe(total - 1);
    expect(byStatus.waiting_input).toBe(1);
    expect(Object.values(byStatus).reduce((sum, count) => sum + count, 0)).toBe(total);
    expect((await harness.request('GET', '/v1/runs/summary')).body.total).toBe(total);
  });
});
