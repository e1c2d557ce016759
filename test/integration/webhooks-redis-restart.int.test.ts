import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness } from '../helpers/harness.js';

// Deliveries waiting for their retry survive their Redis being SIGKILLed and restarted on its AOF: once the
// receiver takes them, each event's webhook-id is accepted once, and none is lost.
let redis: OwnRedis | undefined;
let harness: Harness | undefined;
let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  await redis?.stop();
  server?.closeAllConnections();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('deliveries waiting for a retry survive a Redis restart (AOF) and are each accepted once', async () => {
  let accept = false;
  const received: { id: string; status: number }[] = [];
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const status = accept ? 200 : 503;
      received.push({ id: String(request.headers['webhook-id']), status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  dir = mkdtempSync(join(tmpdir(), 'ratchet-aof-'));
  redis = await startRedisServer({ appendOnly: true, dir });
  const h = new Harness({
    script: { replies: [{ text: 'done' }] },
    redisUrl: redis.url,
    config: {
      webhooks: [
        {
          url,
          events: ['run_completed'],
          secret: `whsec_${randomBytes(32).toString('base64')}`,
          allow_private: true,
          retry_base_ms: 300,
        },
      ],
    },
  });
  harness = h;
  await h.startWorker();
  const runIds: string[] = [];
  for (const input of ['a', 'b', 'c']) {
    const { runId } = await h.engine.startRun({ input });
    await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    runIds.push(runId);
  }
  await waitFor(() => new Set(received.map((request) => request.id)).size === 3, 30_000, 'three refused');
  await redis.stop();
  await new Promise((resolve) => setTimeout(resolve, 500));
  redis = await startRedisServer({ appendOnly: true, dir, port: redis.port });
  accept = true;
  await waitFor(
    () => received.filter((request) => request.status === 200).length === 3,
    60_000,
    'the three deliveries to be accepted after the restart',
  );
  const accepted = received.filter((request) => request.status === 200).map((request) => request.id);
  expect(new Set(accepted).size).toBe(3);
  expect(new Set(received.map((request) => request.id)).size).toBe(3);
}, 120_000);
