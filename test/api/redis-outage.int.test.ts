import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiProcess, startApi } from '../../src/cli/start-api.js';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { altToolbox, testToolbox } from '../fixtures/test-tools.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness } from '../helpers/harness.js';
import { type RawAnswer, rawRequest } from './raw-http.js';

/**
 * Issue 12 (3): whatever state Redis is in — refusing connections, frozen (SIGSTOP) — every route that
 * needs it answers 503 with Retry-After in bounded time, never 500 and never silence. The real API
 * (`startApi`, with its own connections and settings) runs against a redis-server this test starts and
 * stops by pid; requests are raw HTTP, one socket each.
 */

const script: Script = { replies: [{ text: 'done' }] };

let redis: OwnRedis | undefined;
let harness: Harness | undefined;
let api: ApiProcess | undefined;
afterEach(async () => {
  // A frozen Redis must be thawed before anything tries to talk to it or stop it.
  if (redis && redis.process.exitCode === null) redis.process.kill('SIGCONT');
  await api?.close();
  await harness?.close();
  await redis?.stop();
  api = undefined;
  harness = undefined;
  redis = undefined;
});

interface Ids {
  sessionId: string;
  runId: string;
  /** A session only the DELETE request names (a frozen Redis runs queued commands once it thaws). */
  doomedSessionId: string;
}

async function start(): Promise<Ids> {
  redis = await startRedisServer();
  harness = new Harness({ script, redisUrl: redis.url });
  api = await startApi({
    loaded: harness.loaded,
    toolboxes: [testToolbox(), altToolbox()],
    logger: silentLogger(),
    host: '127.0.0.1',
    port: 0,
  });
  const run = await send({ method: 'POST', path: '/v1/runs', body: JSON.stringify({ input: 'go' }) });
  expect(run.status).toBe(202);
  const doomed = await send({ method: 'POST', path: '/v1/sessions', body: '{}' });
  expect(doomed.status).toBe(201);
  const { run_id: runId, session_id: sessionId } = JSON.parse(run.body);
  return { runId, sessionId, doomedSessionId: JSON.parse(doomed.body).id };
}

function send(request: Parameters<typeof rawRequest>[1]): Promise<RawAnswer> {
  if (!api) throw new Error('no API');
  return rawRequest(api.url, request);
}

/** One request of every route category that needs Redis. */
function everyRoute(
  ids: Ids,
): { method: string; path: string; body?: string; headers?: Record<string, string> }[] {
  const session = `/v1/sessions/${ids.sessionId}`;
  const run = `/v1/runs/${ids.runId}`;
  return [
    { method: 'GET', path: '/readyz' },
    { method: 'POST', path: '/v1/sessions', body: '{}' },
    { method: 'GET', path: session },
    {
      method: 'DELETE',
      path: `/v1/sessions/${ids.doomedSessionId}`,
      headers: { 'content-type': 'application/json' },
    },
    { method: 'GET', path: `${session}/messages` },
    { method: 'POST', path: `${session}/messages`, body: JSON.stringify({ text: 'more' }) },
    { method: 'GET', path: `${session}/questions` },
    {
      method: 'POST',
      path: `${session}/respond`,
      body: JSON.stringify({ question_id: 'q_unknown', response: 'yes' }),
    },
    { method: 'GET', path: `${session}/events` },
    { method: 'GET', path: `${session}/events?follow=false` },
    { method: 'POST', path: '/v1/runs', body: JSON.stringify({ input: 'again' }) },
    { method: 'GET', path: run },
    { method: 'GET', path: `${run}/wait?timeout_s=1` },
    { method: 'POST', path: `${run}/cancel`, body: '{}' },
    { method: 'GET', path: '/v1/agents' },
    {
      method: 'POST',
      path: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    },
  ];
}

async function expectReadyAgain(): Promise<void> {
  const deadline = Date.now() + 15_000;
  let ready = await send({ method: 'GET', path: '/readyz' });
  while (ready.status !== 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ready = await send({ method: 'GET', path: '/readyz' });
  }
  expect(ready.status).toBe(200);
}

/** Every route at once, each with a client-side limit of 10 s: all must be 503 with Retry-After. */
async function expectEveryRouteUnavailable(ids: Ids): Promise<void> {
  const routes = everyRoute(ids);
  const answers = await Promise.all(
    routes.map(async (route) => {
      try {
        const answer = await send({ ...route, timeoutMs: 10_000 });
        return { route: `${route.method} ${route.path}`, ...answer };
      } catch (error) {
        return { route: `${route.method} ${route.path}`, status: 0, error: (error as Error).message };
      }
    }),
  );
  const summary = answers.map((answer) => ({
    route: answer.route,
    status: answer.status,
    retryAfter: 'headers' in answer ? answer.headers['retry-after'] : undefined,
  }));
  expect(summary).toEqual(
    routes.map((route) => ({
      route: `${route.method} ${route.path}`,
      status: 503,
      retryAfter: expect.stringMatching(/^\d+$/),
    })),
  );
  for (const answer of answers) {
    if (!('body' in answer) || answer.route.startsWith('POST /mcp')) continue;
    // The one error shape, with nothing of the Redis error in it.
    expect(JSON.parse(answer.body).error.code).toBe('unavailable');
    expect(answer.body).not.toMatch(/ECONNREFUSED|max retries|timed out|127\.0\.0\.1/i);
  }
}

describe('Redis trouble answers 503 with Retry-After on every route', () => {
  it('while Redis refuses connections (stopped with SIGTERM)', async () => {
    const ids = await start();
    const exited = new Promise((resolve) => redis?.process.once('exit', resolve));
    redis?.process.kill('SIGTERM');
    await exited;
    await expectEveryRouteUnavailable(ids);
    // Liveness is the process, not Redis.
    expect((await send({ method: 'GET', path: '/healthz' })).status).toBe(200);

    // Back on the same port (and the harness's own connections, which wait for ever, can close).
    const stopped = redis as OwnRedis;
    redis = await startRedisServer({ port: stopped.port, dir: stopped.dir });
    const back = redis;
    const removeDir = back.stop;
    back.stop = async () => {
      await removeDir();
      rmSync(stopped.dir, { recursive: true, force: true });
    };
    await expectReadyAgain();
    expect((await send({ method: 'GET', path: '/v1/agents' })).status).toBe(200);
  }, 60_000);

  it('while Redis resets the API connections mid-request (CLIENT KILL): every answer comes, none is a 500', async () => {
    const ids = await start();
    if (!redis) throw new Error('no Redis');
    const admin = new Redis(redis.url, { connectionName: 'test-admin' });
    try {
      const routes = everyRoute(ids).filter(
        (route) => route.method === 'GET' && !route.path.includes('/events'),
      );
      const answers: { route: string; status: number; retryAfter: unknown }[] = [];
      const deadline = Date.now() + 3_000;
      const killing = (async () => {
        while (Date.now() < deadline) {
          await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      while (Date.now() < deadline) {
        const round = await Promise.all(
          routes.map(async (route) => {
            const answer = await send({ ...route, timeoutMs: 10_000 });
            return { route: route.path, status: answer.status, retryAfter: answer.headers['retry-after'] };
          }),
        );
        answers.push(...round);
      }
      await killing;
      expect(answers.length).toBeGreaterThan(routes.length);
      const statuses = new Set(answers.map((answer) => answer.status));
      expect([...statuses].every((status) => status === 200 || status === 404 || status === 503)).toBe(true);
      for (const answer of answers.filter((candidate) => candidate.status === 503)) {
        expect(answer.retryAfter).toMatch(/^\d+$/);
      }
    } finally {
      admin.disconnect();
    }
    await expectReadyAgain();
  }, 60_000);

  it('while Redis is frozen (SIGSTOP), and the routes work again once it thaws (SIGCONT)', async () => {
    const ids = await start();
    redis?.process.kill('SIGSTOP');
    await expectEveryRouteUnavailable(ids);
    expect((await send({ method: 'GET', path: '/healthz' })).status).toBe(200);

    redis?.process.kill('SIGCONT');
    await expectReadyAgain();
    expect((await send({ method: 'GET', path: `/v1/sessions/${ids.sessionId}` })).status).toBe(200);
    expect((await send({ method: 'GET', path: `/v1/runs/${ids.runId}` })).status).toBe(200);
    expect((await send({ method: 'GET', path: '/v1/agents' })).status).toBe(200);
    const created = await send({ method: 'POST', path: '/v1/sessions', body: '{}' });
    expect(created.status).toBe(201);
  }, 60_000);
});
