import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { createHttpServer } from '../../src/server/index.js';
import { crashAndTakeOver, waitFor } from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';
import { ApiHarness } from './api-harness.js';

const harnesses: Harness[] = [];
const apis: ApiHarness[] = [];
const apps: FastifyInstance[] = [];

afterAll(async () => {
  await Promise.allSettled(apps.map((app) => app.close()));
  await Promise.allSettled(apis.map((api) => api.close()));
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
});

/** The HTTP API on a harness whose workers run elsewhere (child processes). */
async function apiOn(harness: Harness) {
  const app = createHttpServer({
    engine: harness.engine,
    config: harness.loaded.config,
    logger: silentLogger(),
    bindHost: '127.0.0.1',
    pingRedis: () => harness.redis.ping(),
  });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  return async (path: string): Promise<{ status: number; body: any }> => {
    const response = await fetch(`http://127.0.0.1:${address.port}${path}`);
    return { status: response.status, body: await response.json() };
  };
}

describe('GET /v1/runs/:id/steps after a worker was SIGKILLed mid model call', () => {
  it('shows the iteration run twice, by two different workers, the second a takeover', async () => {
    const script: Script = {
      replies: [
        { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
        { text: 'the sum is 5' },
      ],
    };
    const outcome = await crashAndTakeOver(script, 'add 2 and 3', 'iteration.after_model_call', (harness) =>
      harnesses.push(harness),
    );
    const get = await apiOn(outcome.harness);
    const { status, body } = await get(`/v1/runs/${outcome.runId}/steps`);
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    expect(body.iterations).toBe(2);
    const [first, second] = body.steps;
    expect(first.attempts).toHaveLength(2);
    const [died, tookOver] = first.attempts;
    expect(died.cause).toBe('first');
    expect(tookOver.cause).toBe('takeover');
    expect(died.attempt).toBe(1);
    expect(tookOver.attempt).toBe(1);
    expect(died.worker).not.toBe(tookOver.worker);
    expect(Date.parse(tookOver.started_at)).toBeGreaterThanOrEqual(Date.parse(died.started_at));
    // Two model calls were started for iteration 1: the first one's reply died with its worker.
    expect(first.model_calls).toBe(2);
    expect(first.state).toBe('committed');
    expect(first.provider).toBe('model');
    expect(first.model).toBe('test');
    expect(first.decision).toBe('tools');
    expect(first.tool_calls).toHaveLength(1);
    const [call] = first.tool_calls;
    expect(call.name).toBe('add');
    expect(JSON.parse(call.arguments.text)).toEqual({ a: 2, b: 3 });
    expect(call.result.text).toContain('5');
    expect(call.ledger).toBe('done');
    // The tool call and the next iteration ran once, on the worker that took over.
    expect(call.attempts.map((attempt: { worker: string }) => attempt.worker)).toEqual([tookOver.worker]);
    expect(second.attempts.map((attempt: { cause: string }) => attempt.cause)).toEqual(['first']);
    expect(second.decision).toBe('final');
  });
});

describe('GET /v1/system', () => {
  it('lists two worker processes with their heartbeats, the queues per shard and kind, version and config hash', async () => {
    const api = await ApiHarness.start({
      script: { replies: [{ text: 'done' }] },
      worker: false,
    });
    apis.push(api);
    const harness = api.harness;
    const workers = [harness.spawnWorker(), harness.spawnWorker()];
    await waitFor(
      async () => (await api.request('GET', '/v1/system')).body.workers?.length === 2,
      30_000,
      'two workers registered',
    );
    const { status, body } = await api.request('GET', '/v1/system');
    expect(status).toBe(200);
    const pids = workers.map((worker) => worker.child.pid).sort();
    expect(body.workers.map((worker: { pid: number }) => worker.pid).sort()).toEqual(pids);
    for (const worker of body.workers) {
      expect(worker.alive).toBe(true);
      expect(worker.concurrency).toBe(10);
      expect(worker.shards).toEqual([0]);
      expect(typeof worker.host).toBe('string');
      expect(Date.parse(worker.last_heartbeat_at)).toBeGreaterThanOrEqual(Date.parse(worker.started_at));
    }
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.config_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(body.queues).toHaveLength(1);
    expect(body.queues[0].counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, failed: 0 });
    for (const worker of workers) await worker.stop();
    await waitFor(
      async () => (await api.request('GET', '/v1/system')).body.workers?.length === 0,
      30_000,
      'the stopped workers leaving the registry',
    );
  });
});
