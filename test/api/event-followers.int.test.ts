import type { IncomingMessage } from 'node:http';
import { createParser } from 'eventsource-parser';
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
 * Issue 12 (10): the event followers of an API process (SSE clients) share a bounded number of Redis
 * connections, and beyond `api.max_followers` a follower is refused with 503 + Retry-After. The real API
 * runs against a redis-server of this test's own, so CLIENT LIST shows only this test's connections.
 */

let redis: OwnRedis | undefined;
let harness: Harness | undefined;
let api: ApiProcess | undefined;
let admin: Redis | undefined;
const streams: IncomingMessage[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.destroy();
  admin?.disconnect();
  await api?.close();
  await harness?.close();
  await redis?.stop();
  api = undefined;
  harness = undefined;
  redis = undefined;
  admin = undefined;
});

async function start(options: { script: Script; api?: Record<string, unknown>; worker?: boolean }) {
  redis = await startRedisServer();
  harness = new Harness({
    script: options.script,
    redisUrl: redis.url,
    ...(options.api ? { config: { api: options.api } } : {}),
  });
  if (options.worker) await harness.startWorker();
  api = await startApi({
    loaded: harness.loaded,
    toolboxes: [testToolbox(), altToolbox()],
    logger: silentLogger(),
    host: '127.0.0.1',
    port: 0,
  });
  admin = new Redis(redis.url, { connectionName: 'test-admin' });
  return api;
}

async function send(method: string, path: string, body?: unknown): Promise<RawAnswer> {
  if (!api) throw new Error('no API');
  return rawRequest(api.url, { method, path, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function newSession(): Promise<string> {
  const created = await send('POST', '/v1/sessions', {});
  expect(created.status).toBe(201);
  return JSON.parse(created.body).id;
}

interface Follower {
  sessionId: string;
  received: { id: string; kind: string; runId: string }[];
  answer: RawAnswer;
}

/** An SSE client on a socket of its own that records every event's id and kind. */
async function follow(sessionId: string): Promise<Follower> {
  if (!api) throw new Error('no API');
  const received: Follower['received'] = [];
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data) as { run_id: string };
      received.push({ id: message.id ?? '', kind: message.event ?? 'message', runId: data.run_id });
    },
  });
  const answer = await rawRequest(
    api.url,
    { method: 'GET', path: `/v1/sessions/${sessionId}/events` },
    {
      keepStream: (response) => {
        streams.push(response);
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => parser.feed(chunk));
      },
    },
  );
  return { sessionId, received, answer };
}

/**
 * The clients of the test's Redis: all of them but the run writer's, and those whose name starts with
 * `prefix`. The run writer opens a WATCH connection per concurrent run start, up to a bound
 * (src/redis/checked-writer.ts): those come from the 20 runs started at once, not from following.
 */
async function clients(prefix: string): Promise<{ all: number; named: number }> {
  const list = String(await admin?.call('CLIENT', 'LIST'));
  const names = list
    .trim()
    .split('\n')
    .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '')
    .filter((name) => !name.startsWith('ratchet-run-writer'));
  return { all: names.length, named: names.filter((name) => name.startsWith(prefix)).length };
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Two iterations with a tool call, the model taking a moment: events keep coming while clients follow. */
const twoIterations: Script = {
  replies: [
    { text: 'one two three', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay_ms: 100 },
    { text: 'done and dusted', delay_ms: 100 },
  ],
};

describe('event followers share a bounded number of Redis connections', () => {
  it('200 followers on 20 sessions hold at most one more connection, and each gets every event once, in order', async () => {
    await start({ script: twoIterations, worker: true });
    const sessions = await Promise.all(Array.from({ length: 20 }, () => newSession()));
    const before = await clients('ratchet-events');

    const followers = await Promise.all(
      sessions.flatMap((sessionId) => Array.from({ length: 10 }, () => follow(sessionId))),
    );
    expect(followers.map((follower) => follower.answer.status)).toEqual(followers.map(() => 200));

    // Runs start while everybody follows: events are appended while they are read.
    const runs = await Promise.all(
      sessions.map(async (sessionId) => {
        const started = await send('POST', `/v1/sessions/${sessionId}/messages`, { text: 'go' });
        expect(started.status).toBe(202);
        return { sessionId, runId: JSON.parse(started.body).run_id as string };
      }),
    );
    const during = await clients('ratchet-events');
    expect(during.named).toBeLessThanOrEqual(1);
    expect(during.all - before.all).toBeLessThanOrEqual(1);

    const runOf = new Map(runs.map((run) => [run.sessionId, run.runId]));
    const ended = (follower: Follower) =>
      follower.received.some(
        (event) => event.kind === 'agent_end' && event.runId === runOf.get(follower.sessionId),
      );
    await waitFor(() => followers.every(ended), 60_000, 'every follower to see its run end');
    expect((await clients('ratchet-events')).named).toBeLessThanOrEqual(1);

    for (const sessionId of sessions) {
      const log = (await harness?.engine.readEvents(sessionId)) ?? [];
      expect(log.length).toBeGreaterThan(5);
      for (const follower of followers.filter((candidate) => candidate.sessionId === sessionId)) {
        expect(follower.received.map((event) => event.id)).toEqual(log.map((event) => event.id));
        expect(follower.received.map((event) => event.kind)).toEqual(log.map((event) => event.kind));
      }
    }
  }, 120_000);

  it('refuses the follower beyond api.max_followers with 503 + Retry-After, and takes one again when a place frees', async () => {
    await start({ script: twoIterations, api: { max_followers: 3 } });
    const sessionId = await newSession();
    const admitted = await Promise.all([follow(sessionId), follow(sessionId), follow(sessionId)]);
    expect(admitted.map((follower) => follower.answer.status)).toEqual([200, 200, 200]);

    const refused = await send('GET', `/v1/sessions/${sessionId}/events`);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body).error).toMatchObject({
      code: 'unavailable',
      details: { reason: 'too_many_followers' },
    });

    // A client that goes away gives its place back.
    streams[0]?.destroy();
    let again: Follower | undefined;
    await waitFor(
      async () => {
        const attempt = await follow(sessionId);
        if (attempt.answer.status === 200) again = attempt;
        return again !== undefined;
      },
      10_000,
      'a place to free',
    );
    expect(again?.answer.status).toBe(200);
  }, 60_000);
});
