import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';

// wait_for_event on a real Redis Cluster of three masters (decision 0033): runs of sessions spread over 8 shards
// on the three masters park on their waits; one POST /v1/events (the {events} keys on their own slot) wakes them all, and a
// POST /v1/runs/:id/signal (the run's session's slot) reaches its one run.
let cluster: LocalCluster;
let api: ApiHarness | undefined;

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await cluster?.stop();
});

it('an event sent over HTTP reaches the waiting runs of sessions on every shard, a signal its one run', async () => {
  api = await ApiHarness.start({
    script: {
      rules: [
        {
          when: { role: 'user', contains: 'deploy' },
          reply: {
            tool_calls: [{ name: 'wait_for_event', arguments: { event: 'deploy.done', timeout_s: 120 } }],
          },
        },
        {
          when: { role: 'user', contains: 'approval' },
          reply: {
            tool_calls: [{ name: 'wait_for_event', arguments: { event: 'approved', timeout_s: 120 } }],
          },
        },
      ],
      default: { text: 'done' },
    },
    harness: {
      agent: { toolboxes: ['waits'] },
      // The recheck is no safety net here: only the wake-ups the requests send can end the waits in time.
      worker: { question_recheck_ms: 600_000 },
      config: { redis: { cluster_nodes: cluster.nodes, prefix: 'clwait', shards: 8 } },
    },
  });
  const { engine } = api.harness;
  const waiting: string[] = [];
  for (let index = 0; index < 8; index++)
    waiting.push((await engine.startRun({ input: `deploy ${index}` })).runId);
  const signalled = (await engine.startRun({ input: 'approval please' })).runId;
  await waitFor(
    async () => {
      const runs = await Promise.all([...waiting, signalled].map((runId) => engine.getRun(runId)));
      return runs.every((run) => run?.waiting?.length === 1);
    },
    60_000,
    'every run to wait',
  );

  const sent = await api.request('POST', '/v1/events', {
    body: { event: 'deploy.done', payload: { version: '1.2.3' }, id: 'deploy-1' },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  expect(sent.body).toMatchObject({ id: 'deploy-1', duplicate: false, woken: 8 });
  const signal = await api.request('POST', `/v1/runs/${signalled}/signal`, {
    body: { event: 'approved', payload: { by: 'ann' } },
  });
  expect(signal.status, JSON.stringify(signal.body)).toBe(200);
  expect(signal.body).toMatchObject({ duplicate: false, woken: 1 });

  for (const runId of [...waiting, signalled]) {
    const run = await engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
  }
  const calls = api.harness.modelCalls();
  for (const runId of waiting) {
    const second = calls.filter((call) => call.run_id === runId && call.iteration === 2);
    expect(second).toHaveLength(1);
    expect(second[0]?.messages.filter((message) => message.text.includes('1.2.3'))).toHaveLength(1);
  }
  const approved = calls.filter((call) => call.run_id === signalled && call.iteration === 2);
  expect(approved[0]?.messages.some((message) => message.text.includes('ann'))).toBe(true);
  // Sent again with its id: delivered once.
  const again = await api.request('POST', '/v1/events', { body: { event: 'deploy.done', id: 'deploy-1' } });
  expect(again.body).toMatchObject({ duplicate: true });
}, 180_000);
