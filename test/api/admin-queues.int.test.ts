import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ApiConfig } from '../../src/config/index.js';
import { ApiHarness } from './api-harness.js';
import { rawRequest } from './raw-http.js';

// bull-board at /admin/queues over real HTTP on real Redis: off unless configured, behind the API's tokens
// (a bearer header, or ?token= once for a cookie), behind the host guard, read-only, every shard's queue.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const token = 'admin-queues-test-token-0123456789';

async function start(settings: Partial<ApiConfig>, shards = 3): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: { default: { text: 'done' } },
    api: settings,
    harness: {
      config: {
        redis: { url: inject('redisUrl'), prefix: `t-${randomBytes(6).toString('hex')}`, shards },
      },
    },
  });
  return api;
}

/** A request without following redirects, the body as text. */
async function get(
  harness: ApiHarness,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${harness.url}${path}`, { method, headers, redirect: 'manual' });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

const bearer = { authorization: `Bearer ${token}` };

describe('/admin/queues', () => {
  it('is not served unless api.admin_queues is set', async () => {
    const harness = await start({});
    expect((await get(harness, '/admin/queues')).status).toBe(404);
    expect((await get(harness, '/admin/queues/api/queues')).status).toBe(404);
    expect((await get(harness, '/v1/agents')).status).toBe(200);
  });

  it('with tokens: refuses without one, opens with a bearer header or ?token= and its cookie, lists every shard', async () => {
    const harness = await start({ admin_queues: true, tokens: [token] });
    // A run, so a queue holds a job.
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'hi' }, headers: bearer });
    expect(submitted.status).toBe(202);
    const finished = await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=30`, {
      headers: bearer,
    });
    expect(finished.body.status).toBe('completed');

    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/static/css/x.css']) {
      const refused = await get(harness, path);
      expect(refused.status, path).toBe(401);
      expect(JSON.parse(refused.text).error.code).toBe('unauthorized');
    }
    expect(
      (await get(harness, '/admin/queues', { authorization: 'Bearer wrong-token-0123456789' })).status,
    ).toBe(401);
    expect((await get(harness, '/admin/queues?token=wrong-token-0123456789')).status).toBe(401);

    const page = await get(harness, '/admin/queues', bearer);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('__UI_CONFIG__');
    // Its own headers: framing refused, nothing fetched from outside (the web font link is blocked).
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    // Its scripts and styles are served from under the board's path.
    const script = /src="(static\/js\/main[^"]+\.js)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    expect((await get(harness, `/admin/queues/${script}`, bearer)).status).toBe(200);

    // The JSON API lists the step queue of every shard, each named apart.
    const listed = await get(harness, '/admin/queues/api/queues', bearer);
    expect(listed.status).toBe(200);
    const queues: {
      name: string;
      displayName: string;
      readOnlyMode: boolean;
      counts: Record<string, number>;
    }[] = JSON.parse(listed.text).queues;
    expect(queues.map((queue) => queue.name).sort()).toEqual([
      'shard0-steps',
      'shard1-steps',
      'shard2-steps',
    ]);
    expect(queues.every((queue) => queue.readOnlyMode)).toBe(true);
    const completed = queues.reduce((sum, queue) => sum + (queue.counts.completed ?? 0), 0);
    expect(completed).toBeGreaterThan(0);

    // ?token= once: a cookie scoped to the board, and a redirect that drops the token from the address.
    const opened = await get(harness, `/admin/queues?token=${token}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/admin/queues');
    const setCookie = opened.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^ratchet_admin_queues=[A-Za-z0-9_-]+; /);
    expect(setCookie).toContain('Path=/admin/queues');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain(token);
    // A path whose dot segments would lead elsewhere is never redirected off the board or to another host.
    for (const path of [
      `/admin/queues/static/../../..//evil.example?token=${token}`,
      `/admin/queues/static/%2e%2e/%2e%2e/%2e%2e//evil.example?token=${token}`,
      `/admin/queues/queue/..%2f..%2f..%2f%2fevil.example?token=${token}`,
      `/admin/queues/../..//evil.example?token=${token}`,
      `/admin/queues/queue/../../..//evil.example?token=${token}`,
      `/admin/queues/x/../../..//evil.example?token=${token}`,
    ]) {
      const answer = await rawRequest(harness.url, { method: 'GET', path });
      if (answer.status !== 303) {
        expect([401, 404], path).toContain(answer.status);
        continue;
      }
      // As a browser resolves it: this server, on the board.
      const target = new URL(answer.headers.location ?? '', harness.url);
      expect(target.origin, path).toBe(new URL(harness.url).origin);
      expect(target.pathname.startsWith('/admin/queues'), path).toBe(true);
    }
    const cookie = setCookie.split(';')[0] ?? '';
    expect((await get(harness, '/admin/queues', { cookie })).status).toBe(200);
    expect((await get(harness, '/admin/queues/api/queues', { cookie })).status).toBe(200);
    // The cookie opens the board only, not the API; a forged one opens nothing.
    expect((await get(harness, '/v1/agents', { cookie })).status).toBe(401);
    expect((await get(harness, '/admin/queues', { cookie: 'ratchet_admin_queues=forged' })).status).toBe(401);
  });

  it('is read-only: a write is refused before bull-board runs it, and the queue is untouched', async () => {
    const harness = await start({ admin_queues: true, tokens: [token] });
    for (const [method, path] of [
      ['PUT', '/admin/queues/api/queues/shard0-steps/pause'],
      ['PUT', '/admin/queues/api/queues/pause'],
      ['PUT', '/admin/queues/api/queues/shard1-steps/clean/completed'],
      ['PUT', '/admin/queues/api/queues/shard2-steps/obliterate'],
      ['POST', '/admin/queues/api/queues/shard0-steps/add'],
    ] as const) {
      const refused = await get(harness, path, bearer, method);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(refused.text).error.details.reason).toBe('read_only');
    }
    for (const queue of harness.engine.stepQueues()) expect(await queue.isPaused()).toBe(false);
    // Runs still go through.
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'hi' }, headers: bearer });
    const finished = await harness.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=30`, {
      headers: bearer,
    });
    expect(finished.body.status).toBe('completed');
  });

  it('without tokens: open on the loopback address, behind the host guard', async () => {
    const harness = await start({ admin_queues: true }, 2);
    const page = await get(harness, '/admin/queues');
    expect(page.status).toBe(200);
    // The board's headers are its own; the console keeps its strict policy (built or not: 200 or 503).
    expect(page.headers.get('content-security-policy')).toContain("style-src 'self' 'unsafe-inline'");
    const consolePage = await get(harness, '/console');
    expect(consolePage.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(consolePage.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const listed = await get(harness, '/admin/queues/api/queues');
    expect(
      JSON.parse(listed.text)
        .queues.map((queue: { name: string }) => queue.name)
        .sort(),
    ).toEqual(['shard0-steps', 'shard1-steps']);
    // A page on another site cannot reach it through DNS rebinding (fetch may not set Host: a raw request).
    const port = new URL(harness.url).port;
    const rebinding: Record<string, string>[] = [
      { host: `evil.example:${port}` },
      { origin: `http://evil.example:${port}` },
    ];
    for (const headers of rebinding) {
      const rebound = await rawRequest(harness.url, {
        method: 'GET',
        path: '/admin/queues/api/queues',
        headers,
      });
      expect(rebound.status, JSON.stringify(headers)).toBe(403);
    }
  });
});
