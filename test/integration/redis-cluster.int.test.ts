import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/connection.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { redisToolListings } from '../../src/redis/mcp-tool-listings.js';
import { repoRoot, runCli } from '../cli/cli-fixture.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';

// Ratchet on a real Redis Cluster of three masters started here (redis-server --cluster-enabled yes on
// loopback ports, joined by redis-cli --cluster create, stopped by pid): runs of sessions spread over the
// masters complete — tool loops, a delegation, a question answered, SSE-style following through the event
// hub, a cancellation — and a worker SIGKILLed mid-run and a master restarted on its AOF lose nothing.
let cluster: LocalCluster;
const harnesses: Harness[] = [];

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
  await cluster?.stop();
});

function onCluster(options: HarnessOptions): Harness {
  const harness = new Harness({
    ...options,
    config: {
      ...options.config,
      redis: { cluster_nodes: cluster.nodes, prefix: `cl${harnesses.length}`, shards: 8 },
    },
  });
  harnesses.push(harness);
  return harness;
}

const toolLoop = {
  replies: [
    { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
    { text: 'sums done' },
  ],
};

/** The master serving a session's shard, from the cluster's slot map. */
async function masterOf(harness: Harness, sessionId: string): Promise<string> {
  const slot = keySlot(sessionKeys(harness.engine.space, sessionId).session);
  const slots = (await harness.redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  return `${range?.[2][0]}:${range?.[2][1]}`;
}

describe('on a Redis Cluster of three masters', () => {
  it('runs of sessions spread over the masters complete, with delegation, questions, following and cancellation', async () => {
    const harness = onCluster({
      agents: [
        {
          name: 'lead',
          toolboxes: ['test'],
          script: {
            rules: [
              {
                when: { contains: 'delegate' },
                reply: {
                  tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'help' } }],
                },
              },
              {
                when: { contains: 'ask' },
                reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
              },
              { when: { contains: 'wait' }, reply: { text: 'never', delay_ms: 60_000 } },
              { when: { role: 'tool' }, reply: { text: 'done with the tools' } },
            ],
            ...toolLoop,
          },
        },
        { name: 'helper', script: { default: { text: 'helped' } } },
      ],
    });
    await harness.startWorker();
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => harness.engine.startRun({ input: 'add things', agent: 'lead' })),
    );
    const masters = new Set(await Promise.all(runs.map((run) => masterOf(harness, run.sessionId))));
    expect(masters.size).toBeGreaterThanOrEqual(2);

    // Following a session's events (the event hub's blocking reads, per shard) while its run goes on.
    const followed = runs[0] as (typeof runs)[number];
    const controller = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of harness.engine.followEvents(followed.sessionId, {
        signal: controller.signal,
      })) {
        seen.push(event.kind);
        if (event.kind === 'run_completed') break;
      }
    })();
    for (const run of runs) {
      const done = await harness.engine.waitForRun(run.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('completed');
      // One add, then the rule for tool results answers.
      expect(done.result).toBe('done with the tools');
    }
    await following;
    controller.abort();
    expect(seen).toContain('tool_call_end');
    expect(seen.at(-1)).toBe('run_completed');

    const delegated = await harness.engine.startRun({ input: 'delegate it', agent: 'lead' });
    expect((await harness.engine.waitForRun(delegated.runId, { timeoutMs: 30_000 })).result).toBe(
      'done with the tools',
    );

    const asking = await harness.engine.startRun({ input: 'ask me', agent: 'lead' });
    await waitFor(
      async () => (await harness.engine.listQuestions(asking.sessionId)).length === 1,
      20_000,
      'the question',
    );
    const [question] = await harness.engine.listQuestions(asking.sessionId);
    await harness.engine.respond(asking.sessionId, question?.id ?? '', 'that one');
    expect((await harness.engine.waitForRun(asking.runId, { timeoutMs: 30_000 })).status).toBe('completed');

    const waiting = await harness.engine.startRun({ input: 'wait forever', agent: 'lead' });
    await waitFor(
      () => harness.modelCalls().some((call) => call.run_id === waiting.runId),
      20_000,
      'the long call',
    );
    await harness.engine.cancelRun(waiting.runId, 'not needed');
    expect((await harness.engine.waitForRun(waiting.runId, { timeoutMs: 20_000 })).status).toBe('cancelled');
  });

  it("a worker's MCP server tool listing is saved on the cluster and read back", async () => {
    const harness = onCluster({
      script: { default: { text: 'ok' } },
      config: {
        mcp_servers: [
          {
            name: 'everything',
            command: process.execPath,
            args: [resolve(import.meta.dirname, '../fixtures/mcp-everything-stdio.mjs')],
          },
        ],
      },
    });
    await harness.startWorker();
    const listed = await redisToolListings(harness.redis, harness.engine.space).load('everything');
    expect(listed?.length ?? 0).toBeGreaterThan(0);
  });

  it('ratchet run works on the cluster named by REDIS_CLUSTER_NODES (the CLI, with its in-process API and worker)', async () => {
    const config = join(repoRoot, 'config/team.yaml');
    const { code, stdout, stderr } = await runCli(['run', '--config', config, 'Write about owls'], {
      env: { REDIS_CLUSTER_NODES: cluster.nodes.join(','), RATCHET_PREFIX: 'clcli' },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('answer: Done: the newsroom wrote it, and the critic approved it.');
  });

  it('a worker SIGKILLed mid-run and a master restarted on its AOF lose and duplicate nothing', async () => {
    const harness = onCluster({
      script: {
        replies: [
          { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay_ms: 700 },
          { tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }], delay_ms: 700 },
          { text: 'sums done', delay_ms: 300 },
        ],
      },
      worker: { lock_duration_ms: 2_000, stalled_interval_ms: 1_000 },
      // The provider's shared limiter runs its scripts on the cluster too (its keys have a tag of their own).
      provider: { rate_limit: { rpm: 6000 } },
    });
    const doomed = harness.spawnWorker();
    await waitFor(() => doomed.output().includes('worker started'), 30_000, 'the worker');
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => harness.engine.startRun({ input: 'add' })),
    );
    await waitFor(() => harness.modelCalls().length >= 3, 20_000, 'model calls in flight');
    const survivor = harness.spawnWorker();
    await waitFor(() => survivor.output().includes('worker started'), 30_000, 'the second worker');
    await doomed.kill();
    await cluster.restartNode(1);
    for (const run of runs) {
      const done = await harness.engine.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status, survivor.output().slice(-3000)).toBe('completed');
      const chat = await harness.transcript(run.sessionId);
      expect(chat).toHaveLength(6);
      expect(new Set(chat.map((message) => message.id)).size).toBe(6);
      const events = await harness.events(run.sessionId);
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
      expect(events.filter((event) => event.kind === 'run_completed')).toHaveLength(1);
    }
  }, 120_000);
});
