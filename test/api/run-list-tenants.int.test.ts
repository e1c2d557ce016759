import { afterEach, describe, expect, it } from 'vitest';
import { runIndexKeys, shardOf } from '../../src/redis/keys.js';
import { listRuns } from '../../src/redis/run-index.js';
import { sessionIdOfRun } from '../../src/workflows/ids.js';
import { ApiHarness } from './api-harness.js';

/**
 * GET /v1/runs per tenant (decision 0048): a scoped token's page is read from its tenant's own run index, kept
 * by the run scripts, so a tenant with few runs among many gets full pages at the cost of its own runs; runs
 * indexed before the tenant sets are backfilled once; list items carry their tenant and, while queued for
 * fair admission, the reason.
 */

const operator = 'operator-token-0123456789';
const acme = 'acme-token-0123456789abcd';
const globex = 'globex-token-0123456789ab';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(config: Record<string, unknown> = {}): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: { default: { text: 'done' } },
    worker: false,
    api: { tokens: [operator, { token: acme, tenant: 'acme' }, { token: globex, tenant: 'globex' }] },
    harness: { config },
  });
  return api;
}

describe('GET /v1/runs per tenant', () => {
  it("a tenant's 5 runs among another's 500: a full first page, read from its own index only", async () => {
    const h = await start();
    const mine = [];
    for (let index = 0; index < 5; index += 1)
      mine.push((await h.engine.startRun({ input: `globex ${index}`, tenant: 'globex' })).runId);
    // Acme's come after, so the newest 500 of the whole index are all acme's.
    for (let start = 0; start < 500; start += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_unused, index) =>
          h.engine.startRun({ input: `acme ${start + index}`, tenant: 'acme' }),
        ),
      );

    const page = await h.request('GET', '/v1/runs?limit=50', { headers: as(globex) });
    expect(page.status).toBe(200);
    expect(page.body.runs.map((run: { id: string }) => run.id).sort()).toEqual([...mine].sort());
    expect(page.body.next_cursor).toBeNull();
    for (const run of page.body.runs) expect(run).toMatchObject({ tenant: 'globex', queued_reason: null });

    // Only globex's index is read: looking at 10 entries per source is enough for its 5 (the whole index,
    // newest first, holds 500 of acme's before them).
    const { redis, engine } = h.harness;
    const bounded = await listRuns(redis, engine.space, { tenant: 'globex', limit: 50 }, 10);
    expect(bounded.runs.map((run) => run.id).sort()).toEqual([...mine].sort());
    expect(bounded.next).toBeNull();
    const whole = await listRuns(redis, engine.space, { limit: 50 }, 10);
    expect(whole.runs.every((run) => run.tenant === 'acme')).toBe(true);

    // Another tenant's runs are never listed, whatever the filter asks.
    const named = await h.request('GET', '/v1/runs?tenant=acme', { headers: as(globex) });
    expect(named.status).toBe(200);
    expect(named.body.runs).toEqual([]);
    const searched = await h.request('GET', '/v1/runs?text=acme&limit=500', { headers: as(globex) });
    expect(searched.body.runs).toEqual([]);
    const summary = await h.request('GET', '/v1/runs/summary', { headers: as(globex) });
    expect(summary.body.total).toBe(5);

    // Acme pages through its own 500, never seeing globex's.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const acmePage = await h.request('GET', `/v1/runs?limit=200${query}`, { headers: as(acme) });
      for (const run of acmePage.body.runs) seen.add(run.id);
      cursor = acmePage.body.next_cursor;
    } while (cursor !== null);
    expect(seen.size).toBe(500);
    for (const id of mine) expect(seen.has(id)).toBe(false);

    // The operator may ask for one tenant's runs.
    const operatorPage = await h.request('GET', '/v1/runs?tenant=globex', { headers: as(operator) });
    expect(operatorPage.body.runs.map((run: { id: string }) => run.id).sort()).toEqual([...mine].sort());
  }, 120_000);

  it('runs indexed before the tenant sets are backfilled once, then listed from them', async () => {
    const h = await start();
    const globexRuns = [];
    for (let index = 0; index < 3; index += 1)
      globexRuns.push((await h.engine.startRun({ input: `globex ${index}`, tenant: 'globex' })).runId);
    const acmeRun = (await h.engine.startRun({ input: 'acme', tenant: 'acme' })).runId;
    // As an index written before it kept tenants: no tenants hash, no tenant sets, no marker.
    const { redis, engine } = h.harness;
    const shards = new Set(
      [...globexRuns, acmeRun].map((id) => shardOf(engine.space, sessionIdOfRun(id) ?? '')),
    );
    for (const shard of shards) {
      const keys = runIndexKeys(engine.space, shard);
      await redis.del(keys.tenants, keys.tenant('globex'), keys.tenant('acme'), keys.tenantsIndexed);
    }
    const page = await h.request('GET', '/v1/runs', { headers: as(globex) });
    expect(page.body.runs.map((run: { id: string }) => run.id).sort()).toEqual([...globexRuns].sort());
    for (const shard of shards) {
      const keys = runIndexKeys(engine.space, shard);
      expect(await redis.get(keys.tenantsIndexed)).toBe('1');
      const tenants = await redis.hgetall(keys.tenants);
      for (const id of Object.keys(await redis.hgetall(keys.entries)))
        expect(tenants[id]).toBe(globexRuns.includes(id) ? 'globex' : 'acme');
    }
    const acmePage = await h.request('GET', '/v1/runs', { headers: as(acme) });
    expect(acmePage.body.runs.map((run: { id: string }) => run.id)).toEqual([acmeRun]);
  }, 60_000);

  it('a queued run is listed with its tenant and why it waits for admission', async () => {
    const h = await start({ admission: { max_active_runs: 1, recheck_s: 30 } });
    const first = await h.submitRun('first', { headers: as(acme) });
    const second = await h.submitRun('second', { headers: as(acme) });
    const page = await h.request('GET', '/v1/runs', { headers: as(operator) });
    expect(page.status).toBe(200);
    const byId = new Map(page.body.runs.map((run: { id: string }) => [run.id, run]));
    expect(byId.get(second.runId)).toMatchObject({
      status: 'queued',
      tenant: 'acme',
      queued_reason: { reason: 'deployment_limit', ahead: 0 },
    });
    expect(byId.get(first.runId)).toMatchObject({ tenant: 'acme', queued_reason: null });
    // The same reason as the run's own view.
    const view = await h.request('GET', `/v1/runs/${second.runId}`, { headers: as(acme) });
    expect(byId.get(second.runId)).toMatchObject({ queued_reason: view.body.queued_reason });
  }, 60_000);
});
