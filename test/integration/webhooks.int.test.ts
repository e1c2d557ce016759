import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookQueueName, webhookQueuePrefix } from '../../src/redis/keys.js';
import { listDeliveries } from '../../src/redis/webhook-deliveries.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// Webhooks on real Redis, a real receiver over HTTP and, for the crash, real worker processes: an event
// recorded by a run is delivered from the durable queue, retried until the receiver takes it, signed so the
// package's own verifier accepts it, with one webhook-id per event however often it is sent.

const secret = `whsec_${randomBytes(32).toString('base64')}`;

interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number | 'held';
}

/** A local receiver: `answer` decides each request's status, or holds it unanswered ('held'). */
async function receiver(answer: (request: number) => number | 'held'): Promise<{
  url: string;
  received: Received[];
  server: Server;
}> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = answer(received.length + 1);
      received.push({
        id: String(request.headers['webhook-id']),
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: status,
      });
      if (status === 'held') return;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received, server };
}

let harness: Harness | undefined;
let server: Server | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

function deliveryQueue(h: Harness): Queue {
  return new Queue(webhookQueueName, {
    connection: h.redis,
    prefix: webhookQueuePrefix({ prefix: h.prefix }),
  });
}

describe('webhooks', () => {
  it('retries a receiver that fails three times until every event is accepted once, signed', async () => {
    const hook = await receiver((request) => (request <= 3 ? 500 : 200));
    server = hook.server;
    const h = new Harness({
      // Each run starts the script again: every run answers 'done'.
      script: { replies: [{ text: 'done' }] },
      config: {
        webhooks: [
          {
            id: 'ci',
            url: hook.url,
            events: ['run_completed'],
            secret,
            allow_private: true,
            retry_base_ms: 50,
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
    const accepted = () => hook.received.filter((request) => request.answered === 200);
    await waitFor(() => accepted().length === 3, 60_000, 'three accepted deliveries');
    // Give a duplicate the time to arrive if one were coming: every delivery is listed as delivered first.
    const queue = deliveryQueue(h);
    try {
      const space = { prefix: h.prefix, shards: 1 };
      let listed = await listDeliveries(queue, h.redis, space, { limit: 10 });
      await waitFor(
        async () => {
          listed = await listDeliveries(queue, h.redis, space, { limit: 10 });
          return listed.deliveries.every((delivery) => delivery.status === 'delivered');
        },
        30_000,
        'every delivery to be listed as delivered',
      );
      expect(listed.deliveries).toHaveLength(3);
      expect(listed.deliveries.reduce((sum, delivery) => sum + delivery.attempts, 0)).toBe(6);
      expect(listed.deliveries.map((delivery) => delivery.run_id).sort()).toEqual([...runIds].sort());
    } finally {
      await queue.close();
    }
    expect(hook.received).toHaveLength(6);
    const acceptedIds = accepted().map((request) => request.id);
    expect(new Set(acceptedIds).size).toBe(3);
    // Every retry carried the webhook-id of the first attempt at its event.
    expect(new Set(hook.received.map((request) => request.id))).toEqual(new Set(acceptedIds));
    const verifier = new Webhook(secret);
    const payloads = hook.received.map((request) => {
      const payload = verifier.verify(request.body, request.headers as Record<string, string>) as {
        type: string;
        data: { run_id: string; result: string };
      };
      expect(payload.type).toBe('run_completed');
      return payload;
    });
    expect(new Set(payloads.map((payload) => payload.data.run_id))).toEqual(new Set(runIds));
    expect(payloads.every((payload) => payload.data.result === 'done')).toBe(true);
    // A body tampered with fails the same verifier.
    const [first] = hook.received;
    if (!first) throw new Error('no request');
    expect(() => verifier.verify(`${first.body} `, first.headers as Record<string, string>)).toThrow();
  }, 120_000);

  it('refuses a receiver on a private address unless the webhook allows it, and says which setting does', async () => {
    const hook = await receiver(() => 200);
    server = hook.server;
    const h = new Harness({
      script: { replies: [{ text: 'done' }] },
      config: { webhooks: [{ url: hook.url, events: ['run_completed'], secret, retry_base_ms: 50 }] },
    });
    harness = h;
    await h.startWorker();
    const { runId } = await h.engine.startRun({ input: 'go' });
    await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    const queue = deliveryQueue(h);
    try {
      const space = { prefix: h.prefix, shards: 1 };
      let listed = await listDeliveries(queue, h.redis, space, { limit: 10 });
      await waitFor(
        async () => {
          listed = await listDeliveries(queue, h.redis, space, { limit: 10 });
          return listed.deliveries[0]?.status === 'failed';
        },
        30_000,
        'the delivery to fail',
      );
      const [delivery] = listed.deliveries;
      expect(delivery?.webhook).toBe('webhook-1');
      expect(delivery?.attempts).toBe(1);
      expect(delivery?.last_error).toContain('is a loopback address');
      expect(delivery?.last_error).toContain('allow_private: true');
    } finally {
      await queue.close();
    }
    expect(hook.received).toHaveLength(0);
  }, 60_000);

  it('a worker SIGKILLed in the middle of a delivery does not lose it: another delivers it, same webhook-id', async () => {
    const hook = await receiver((request) => (request === 1 ? 'held' : 200));
    server = hook.server;
    const h = new Harness({
      script: { replies: [{ text: 'done' }] },
      config: {
        webhooks: [
          {
            id: 'ops',
            url: hook.url,
            events: ['run_completed'],
            secret,
            allow_private: true,
            retry_base_ms: 50,
          },
        ],
      },
    });
    harness = h;
    const doomed = h.spawnWorker();
    await waitFor(() => doomed.output().includes('webhooks started'), 60_000, 'the first worker to start');
    const { runId } = await h.engine.startRun({ input: 'go' });
    await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    await waitFor(() => hook.received.length === 1, 30_000, 'the first delivery to arrive');
    await doomed.kill();
    const survivor = h.spawnWorker();
    await waitFor(() => hook.received.length === 2, 60_000, 'the delivery to be taken over');
    const [held, taken] = hook.received;
    expect(taken?.id).toBe(held?.id);
    expect(taken?.answered).toBe(200);
    const verifier = new Webhook(secret);
    expect(verifier.verify(taken?.body ?? '', taken?.headers as Record<string, string>)).toMatchObject({
      type: 'run_completed',
      data: { run_id: runId },
    });
    const queue = deliveryQueue(h);
    try {
      await waitFor(
        async () => {
          const listed = await listDeliveries(queue, h.redis, { prefix: h.prefix, shards: 1 }, { limit: 10 });
          return listed.deliveries.length === 1 && listed.deliveries[0]?.status === 'delivered';
        },
        30_000,
        'the delivery to be listed as delivered',
      );
    } finally {
      await queue.close();
    }
    expect(hook.received).toHaveLength(2);
    expect(survivor.output()).toContain('webhooks started');
  }, 180_000);
});

describe('webhook dispatcher crash points', () => {
  it.each([['webhook.before_enqueue'], ['webhook.after_enqueue']])(
    'SIGKILL at %s: another worker enqueues the delivery once, and it arrives',
    async (point) => {
      const hook = await receiver(() => 200);
      server = hook.server;
      const h = new Harness({
        script: { replies: [{ text: 'done' }] },
        config: {
          webhooks: [
            {
              id: 'ops',
              url: hook.url,
              events: ['run_completed'],
              secret,
              allow_private: true,
              retry_base_ms: 50,
            },
          ],
        },
      });
      harness = h;
      const doomed = h.spawnWorker({ crashAt: point });
      await waitFor(() => doomed.output().includes('webhooks started'), 60_000, 'the first worker to start');
      const { runId } = await h.engine.startRun({ input: 'go' });
      await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
      await waitFor(
        () => doomed.output().includes(`crash point ${point} reached`),
        30_000,
        'the crash point',
      );
      await doomed.kill();
      h.spawnWorker();
      // The survivor takes the dead consumer's unacknowledged entry over once it is stale (10 s).
      const queue = deliveryQueue(h);
      try {
        await waitFor(
          async () => {
            const pending = (await h.redis.xpending(`${h.prefix}:{0}:webhooks:outbox`, 'webhooks')) as [
              number,
            ];
            const listed = await listDeliveries(
              queue,
              h.redis,
              { prefix: h.prefix, shards: 1 },
              { limit: 10 },
            );
            return pending[0] === 0 && listed.deliveries[0]?.status === 'delivered';
          },
          60_000,
          'the outbox acknowledged and the delivery made',
        );
        const listed = await listDeliveries(queue, h.redis, { prefix: h.prefix, shards: 1 }, { limit: 10 });
        expect(listed.deliveries).toHaveLength(1);
      } finally {
        await queue.close();
      }
      // At least once on the wire (a kill may cut a delivery in flight), always with the one webhook-id.
      expect(hook.received.length).toBeGreaterThanOrEqual(1);
      expect(new Set(hook.received.map((request) => request.id)).size).toBe(1);
      expect(hook.received.some((request) => request.answered === 200)).toBe(true);
    },
    120_000,
  );
});

describe('webhook events of questions', () => {
  it('sends a tool call awaiting approval as approval_requested, with the tool and its arguments', async () => {
    const hook = await receiver(() => 200);
    server = hook.server;
    const h = new Harness({
      script: {
        rules: [
          {
            when: { role: 'user', contains: 'charge' },
            reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
          },
        ],
        default: { text: 'done' },
      },
      agent: { tools: { charge_card: { requires_approval: true } } },
      config: {
        webhooks: [
          {
            url: hook.url,
            events: ['approval_requested', 'run_cancelled'],
            secret,
            allow_private: true,
            retry_base_ms: 50,
          },
        ],
      },
    });
    harness = h;
    await h.startWorker();
    const { runId } = await h.engine.startRun({ input: 'charge the card' });
    await waitFor(() => hook.received.length === 1, 30_000, 'the approval to be sent');
    const verifier = new Webhook(secret);
    const [approval] = hook.received;
    expect(verifier.verify(approval?.body ?? '', approval?.headers as Record<string, string>)).toMatchObject({
      type: 'approval_requested',
      data: { run_id: runId, kind: 'approval', tool: { name: 'charge_card', arguments: '{"amount":42}' } },
    });
    // Cancelled through the client face, as the API does: its event is recorded by the cancel script.
    await h.engine.cancelRun(runId, 'not today');
    await waitFor(() => hook.received.length === 2, 30_000, 'the cancellation to be sent');
    expect(
      verifier.verify(hook.received[1]?.body ?? '', hook.received[1]?.headers as Record<string, string>),
    ).toMatchObject({
      type: 'run_cancelled',
      data: { run_id: runId },
    });
  }, 60_000);

  it('sends the run_cancelled of a run a message interrupted (on_busy: interrupt)', async () => {
    const hook = await receiver(() => 200);
    server = hook.server;
    const h = new Harness({
      script: {
        rules: [
          {
            when: { role: 'user', contains: 'charge' },
            reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
          },
        ],
        default: { text: 'done' },
      },
      agent: { tools: { charge_card: { requires_approval: true } } },
      config: {
        webhooks: [
          { url: hook.url, events: ['run_cancelled'], secret, allow_private: true, retry_base_ms: 50 },
        ],
      },
    });
    harness = h;
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'charge the card' });
    await waitFor(
      async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
      30_000,
      'the approval',
    );
    const sent = await h.engine.sendMessage({ sessionId, input: 'never mind', onBusy: 'interrupt' });
    expect(sent.delivery).toBe('interrupted');
    await waitFor(() => hook.received.length === 1, 30_000, 'the interruption to be sent');
    const verifier = new Webhook(secret);
    expect(
      verifier.verify(hook.received[0]?.body ?? '', hook.received[0]?.headers as Record<string, string>),
    ).toMatchObject({ type: 'run_cancelled', data: { run_id: runId } });
  }, 60_000);
});
