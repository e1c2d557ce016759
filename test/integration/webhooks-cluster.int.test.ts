import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';

// Webhooks on a real Redis Cluster of three masters: the commit scripts write each shard's outbox in the
// events key's slot (a key they derive, not one they are given), the dispatcher reads every shard's outbox,
// and every run's end arrives once, signed, whichever master its session lives on.
let cluster: LocalCluster;
let harness: Harness | undefined;
let server: Server | undefined;

beforeAll(async () => {
  cluster = await startLocalCluster(3);
}, 60_000);

afterAll(async () => {
  await harness?.close();
  server?.closeAllConnections();
  server?.close();
  await cluster?.stop();
});

it('delivers the end of runs of sessions on every master, each once', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const received: { id: string; body: string; headers: Record<string, string> }[] = [];
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        id: String(request.headers['webhook-id']),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers as Record<string, string>,
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const h = new Harness({
    script: { replies: [{ text: 'done' }] },
    config: {
      redis: { cluster_nodes: cluster.nodes, prefix: 'clhook', shards: 8 },
      webhooks: [{ url, events: ['run_completed'], secret, allow_private: true, retry_base_ms: 50 }],
    },
  });
  harness = h;
  await h.startWorker();
  const runIds: string[] = [];
  for (let index = 0; index < 8; index++) {
    const { runId } = await h.engine.startRun({ input: `run ${index}` });
    runIds.push(runId);
  }
  for (const runId of runIds) await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
  await waitFor(() => received.length >= 8, 60_000, 'eight deliveries');
  const verifier = new Webhook(secret);
  const delivered = received.map(
    (request) => (verifier.verify(request.body, request.headers) as { data: { run_id: string } }).data.run_id,
  );
  expect(delivered.sort()).toEqual([...runIds].sort());
  expect(new Set(received.map((request) => request.id)).size).toBe(8);
}, 120_000);
