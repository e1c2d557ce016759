import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/webhooks/deliveries and POST …/:id/redeliver through the typed client, on real Redis with a real
// receiver: each delivery's status, attempts, last error and next attempt, pages that do not overlap, and a
// redelivery with the same webhook-id.

const secret = `whsec_${randomBytes(32).toString('base64')}`;

let api: ApiHarness | undefined;
let server: Server | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

describe('webhook deliveries over the API', () => {
  it('lists deliveries with their status and next attempt, pages them, and redelivers one', async () => {
    let accept = false;
    const received: string[] = [];
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received.push(String(request.headers['webhook-id']));
        response.writeHead(accept ? 204 : 503).end(accept ? undefined : 'busy');
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    api = await ApiHarness.start({
      script: { replies: [{ text: 'done' }] },
      harness: {
        config: {
          // A long first retry: a failed delivery stays listed as retrying while the test reads it.
          webhooks: [
            { id: 'ci', url, events: ['run_completed'], secret, allow_private: true, retry_base_ms: 600_000 },
          ],
        },
      },
    });
    const client = new RatchetClient({ baseUrl: api.url });
    const runIds: string[] = [];
    for (const input of ['a', 'b', 'c']) {
      const { runId } = await api.harness.engine.startRun({ input });
      await api.harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
      runIds.push(runId);
    }
    await waitFor(
      async () => {
        const page = await client.webhookDeliveries();
        return (
          page.deliveries.length === 3 && page.deliveries.every((delivery) => delivery.status === 'retrying')
        );
      },
      30_000,
      'three deliveries waiting for their retry',
    );
    const all = await client.webhookDeliveries();
    for (const delivery of all.deliveries) {
      expect(delivery).toMatchObject({
        webhook: 'ci',
        type: 'run_completed',
        attempts: 1,
        status: 'retrying',
      });
      expect(delivery.last_error).toBe('the receiver answered 503: busy');
      const next = Date.parse(delivery.next_attempt_at ?? '');
      expect(next - Date.parse(delivery.created_at)).toBeGreaterThan(500_000);
      expect(delivery.max_attempts).toBeGreaterThan(2);
    }
    // Newest first: the last run's delivery leads.
    expect(all.deliveries.map((delivery) => delivery.run_id)).toEqual([...runIds].reverse());
    const first = await client.webhookDeliveries({ limit: 2 });
    expect(first.deliveries).toHaveLength(2);
    expect(first.next_cursor).not.toBeNull();
    const second = await client.webhookDeliveries({ limit: 2, cursor: first.next_cursor ?? '' });
    expect([...first.deliveries, ...second.deliveries].map((delivery) => delivery.id)).toEqual(
      all.deliveries.map((delivery) => delivery.id),
    );
    expect(second.next_cursor).toBeNull();

    accept = true;
    const [target] = all.deliveries;
    if (!target) throw new Error('no delivery');
    await client.redeliverWebhook(target.id);
    await waitFor(
      async () => (await client.webhookDeliveries()).deliveries[0]?.status === 'delivered',
      30_000,
      'the redelivery to be made',
    );
    expect(received.filter((id) => id === target.message_id)).toHaveLength(2);
    const delivered = (await client.webhookDeliveries()).deliveries[0];
    expect(delivered?.delivered_at).not.toBeNull();
    expect(delivered?.next_attempt_at).toBeNull();

    const unknown = await client
      .redeliverWebhook(`ci.ses_0000000000000000.1-0`)
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(RatchetApiError);
    expect((unknown as RatchetApiError).status).toBe(404);
    const badCursor = await api.request('GET', '/v1/webhooks/deliveries?cursor=nonsense');
    expect(badCursor.status).toBe(400);
    expect(JSON.stringify(badCursor.body)).toContain('next_cursor returned by GET /v1/webhooks/deliveries');
    const tooMany = await api.request('GET', '/v1/webhooks/deliveries?limit=101');
    expect(tooMany.status).toBe(400);
  }, 120_000);
});
