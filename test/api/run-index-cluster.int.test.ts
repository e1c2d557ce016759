import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/connection.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';
import { ApiHarness } from './api-harness.js';

// The run index on a Redis Cluster of three masters (started here, stopped by pid): each shard's index lives
// with its shard on one master, and GET /v1/runs, /v1/runs/summary and /v1/sessions merge the shards in order.
let cluster: LocalCluster;
let api: ApiHarness | undefined;

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await cluster?.stop();
});

interface Listed {
  id: string;
  session_id: string;
  agent: string;
  status: string;
  root_run_id: string | null;
  created_at: string;
}

describe('the run index on a Redis Cluster of three masters', () => {
  it('lists runs of shards on every master newest first, filters, pages and counts them', async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'unused' } },
      harness: {
        agents: [
          {
            name: 'lead',
            script: {
              rules: [
                {
                  when: { role: 'user', contains: 'fail' },
                  reply: { text: 'never', fail: [{ kind: 'auth' }] },
                },
                {
                  when: { role: 'user', contains: 'question' },
                  reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
                },
                {
                  when: { role: 'user', contains: 'delegate' },
                  reply: {
                    tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'help' } }],
                  },
                },
              ],
              default: { text: 'done' },
            },
          },
          { name: 'helper', script: { default: { text: 'helped' } } },
        ],
        config: { redis: { cluster_nodes: cluster.nodes, prefix: 'runindex', shards: 8 } },
      },
    });
    const harness = api;
    const inputs = ['hello', 'fail now', 'a question', 'please delegate'];
    const submitted: { run_id: string; session_id: string }[] = [];
    for (let index = 0; index < 16; index += 1) {
      const response = await harness.request('POST', '/v1/runs', {
        body: { input: inputs[index % inputs.length], agent: index % 5 === 4 ? 'helper' : 'lead' },
      });
      expect(response.status).toBe(202);
      submitted.push(response.body);
    }
    const settled = async () => {
      const statuses = await Promise.all(
        submitted.map(async ({ run_id }) => (await harness.request('GET', `/v1/runs/${run_id}`)).body.status),
      );
      return statuses.every((status) => ['completed', 'failed', 'waiting_input'].includes(status));
    };
    await waitFor(settled, 60_000, 'every run settled');

    const slots = (await harness.harness.redis.call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number],
    ][];
    const masterOf = (sessionId: string) => {
      const slot = keySlot(sessionKeys(harness.harness.engine.space, sessionId).session);
      return slots.findIndex(([from, to]) => slot >= from && slot <= to);
    };
    // Sixteen random sessions over eight shards: on two masters at least, almost always three.
    expect(new Set(submitted.map((run) => masterOf(run.session_id))).size).toBeGreaterThanOrEqual(2);

    const all = (await harness.request('GET', '/v1/runs?limit=500')).body as {
      runs: Listed[];
      next_cursor: null;
    };
    expect(all.next_cursor).toBeNull();
    // Every run, each child of a delegation included, in (created_at, id) order descending.
    const expected = [...all.runs].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
    );
    expect(all.runs.map((run) => run.id)).toEqual(expected.map((run) => run.id));
    const roots = all.runs.filter((run) => run.root_run_id === null);
    expect(roots.map((run) => run.id).sort()).toEqual(submitted.map((run) => run.run_id).sort());
    for (const listed of all.runs) {
      const run = (await harness.request('GET', `/v1/runs/${listed.id}`)).body;
      expect([listed.id, listed.status, listed.agent, listed.created_at]).toEqual([
        run.id,
        run.status,
        run.agent,
        run.created_at,
      ]);
    }

    // Pages of three, merged over the masters: the same order, nothing missed or repeated.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { runs: Listed[]; next_cursor: string | null } = (
        await harness.request('GET', `/v1/runs?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      ).body;
      expect(page.runs.length).toBeLessThanOrEqual(3);
      paged.push(...page.runs.map((run: Listed) => run.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all.runs.map((run) => run.id));

    const only = async (query: string) =>
      ((await harness.request('GET', `/v1/runs?${query}`)).body.runs as Listed[]).map((run) => run.id);
    const ids = (keep: (run: Listed) => boolean) => all.runs.filter(keep).map((run) => run.id);
    expect(await only('status=failed')).toEqual(ids((run) => run.status === 'failed'));
    expect(await only('status=failed&status=waiting_input')).toEqual(
      ids((run) => run.status === 'failed' || run.status === 'waiting_input'),
    );
    expect(await only('agent=helper')).toEqual(ids((run) => run.agent === 'helper'));
    expect(await only('root=true')).toEqual(ids((run) => run.root_run_id === null));
    expect(await only('root=false')).toEqual(ids((run) => run.root_run_id !== null));
    const one = submitted[3];
    if (!one) throw new Error('no run');
    expect(await only(`session_id=${one.session_id}`)).toEqual(
      ids((run) => run.session_id === one.session_id),
    );
    expect(await only(`q=${one.run_id}`)).toEqual([one.run_id]);
    const middle = all.runs[Math.floor(all.runs.length / 2)]?.created_at ?? '';
    expect(await only(`since=${middle}`)).toEqual(ids((run) => run.created_at >= middle));
    expect(await only(`until=${middle}`)).toEqual(ids((run) => run.created_at <= middle));

    const summary = (await harness.request('GET', '/v1/runs/summary')).body;
    expect(summary.total).toBe(all.runs.length);
    for (const status of ['completed', 'failed', 'waiting_input'])
      expect(summary.counts[status], status).toBe(all.runs.filter((run) => run.status === status).length);

    const sessions = (await harness.request('GET', '/v1/sessions?limit=500')).body.sessions as {
      id: string;
      last_active_at: string;
    }[];
    expect(sessions.map((session) => session.id).sort()).toEqual(
      submitted.map((run) => run.session_id).sort(),
    );
    expect(
      sessions.every(
        (session, index) =>
          index === 0 || (sessions[index - 1]?.last_active_at ?? '') >= session.last_active_at,
      ),
    ).toBe(true);

    // A deleted session's runs leave the index of the master that held them.
    expect((await harness.request('DELETE', `/v1/sessions/${one.session_id}`)).status).toBe(204);
    expect(await only(`session_id=${one.session_id}`)).toEqual([]);
    expect((await harness.request('GET', '/v1/runs/summary')).body.total).toBe(
      all.runs.filter((run) => run.session_id !== one.session_id).length,
    );
  });
});
