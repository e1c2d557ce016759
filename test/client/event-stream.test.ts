import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient, type RatchetClientEvent } from '../../src/client/index.js';

// The event iterator against a small SSE server on loopback that answers each connection as a test says:
// what the real API never does (send `retry:`, a kind this client does not know, 503s) or does only under
// faults.

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(
  handler: Handler,
): Promise<{ client: RatchetClient; lastEventIds: (string | undefined)[] }> {
  const lastEventIds: (string | undefined)[] = [];
  server = createServer((request, response) => {
    lastEventIds.push(request.headers['last-event-id'] as string | undefined);
    handler(request, response, lastEventIds.length - 1);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { client: new RatchetClient({ baseUrl: `http://127.0.0.1:${address.port}` }), lastEventIds };
}

const time = '2026-01-01T00:00:00.000Z';
const usage = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, requests: 1 };

function frame(id: string, kind: string, data: unknown, extra: Record<string, unknown> = {}): string {
  const event = { id, kind, run_id: 'run_a', agent: 'agent', time, data, ...extra };
  return `id: ${id}\nevent: ${kind}\ndata: ${JSON.stringify(event)}\n\n`;
}

const started = frame('1-0', 'run_started', { input: 'go' });
const completed = frame('3-0', 'run_completed', { result: 'done', usage, iterations: 1 });

function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
}

async function collect(events: AsyncIterable<RatchetClientEvent>): Promise<RatchetClientEvent[]> {
  const received: RatchetClientEvent[] = [];
  for await (const event of events) received.push(event);
  return received;
}

describe('the event iterator', () => {
  it("reconnects after the server's retry: rather than its own delay, resuming after the last event", async () => {
    const { client, lastEventIds } = await serve((_request, response, index) => {
      openStream(response);
      if (index === 0) {
        response.write(`retry: 5\n\n${started}`);
        // Cut, as a dropped connection: the response never ends properly.
        setTimeout(() => response.socket?.destroy(), 20);
      } else response.end(completed);
    });
    // Ten minutes of own delay: only the server's retry: lets this end.
    const received = await collect(client.events('ses_a', { untilRunEnds: 'run_a', retryDelayMs: 600_000 }));
    expect(received.map((event) => event.id)).toEqual(['1-0', '3-0']);
    expect(lastEventIds).toEqual([undefined, '1-0']);
  });

  it('skips a kind it does not know but resumes after it, and drops fields a newer server adds', async () => {
    const { client, lastEventIds } = await serve((_request, response, index) => {
      openStream(response);
      if (index === 0) {
        response.write(frame('1-0', 'run_started', { input: 'go', language: 'en' }, { shard: 3 }));
        response.write(frame('2-0', 'mood_changed', { mood: 'happy' }));
        setTimeout(() => response.socket?.destroy(), 20);
      } else response.end(completed);
    });
    const received = await collect(client.events('ses_a', { untilRunEnds: 'run_a', retryDelayMs: 1 }));
    expect(received).toEqual([
      { id: '1-0', kind: 'run_started', run_id: 'run_a', agent: 'agent', time, data: { input: 'go' } },
      {
        id: '3-0',
        kind: 'run_completed',
        run_id: 'run_a',
        agent: 'agent',
        time,
        data: { result: 'done', usage, iterations: 1 },
      },
    ]);
    expect(lastEventIds).toEqual([undefined, '2-0']);
  });

  it('drops a connection that goes silent (no keep-alive) and resumes on a new one', async () => {
    const { client, lastEventIds } = await serve((_request, response, index) => {
      openStream(response);
      // The first connection sends one event, then nothing at all, and stays open.
      if (index === 0) response.write(started);
      else response.end(completed);
    });
    const received = await collect(
      client.events('ses_a', { untilRunEnds: 'run_a', idleTimeoutMs: 100, retryDelayMs: 1 }),
    );
    expect(received.map((event) => event.id)).toEqual(['1-0', '3-0']);
    expect(lastEventIds).toEqual([undefined, '1-0']);
  });

  it('retries a 503 after its Retry-After, and throws a 404 at once', async () => {
    const { client, lastEventIds } = await serve((request, response, index) => {
      if (request.url?.includes('ses_missing')) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            error: {
              code: 'not_found',
              message: 'unknown session ses_missing',
              details: { resource: 'session' },
            },
          }),
        );
      } else if (index === 0) {
        response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
        response.end(JSON.stringify({ error: { code: 'unavailable', message: 'later', details: {} } }));
      } else {
        openStream(response);
        response.end(`${started}${completed}`);
      }
    });
    const received = await collect(client.events('ses_a', { untilRunEnds: 'run_a', retryDelayMs: 1 }));
    expect(received.map((event) => event.kind)).toEqual(['run_started', 'run_completed']);
    expect(lastEventIds).toHaveLength(2);

    const missing = await collect(client.events('ses_missing', { retryDelayMs: 1 })).catch((error) => error);
    expect(missing).toBeInstanceOf(RatchetApiError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', details: { resource: 'session' } });
    expect(lastEventIds).toHaveLength(3);
  });

  it('gives up after maxRetries connections in a row that bring no event', async () => {
    const { client, lastEventIds } = await serve((_request, response) => {
      openStream(response);
      setTimeout(() => response.socket?.destroy(), 5);
    });
    await expect(collect(client.events('ses_a', { maxRetries: 3, retryDelayMs: 1 }))).rejects.toThrow();
    expect(lastEventIds).toHaveLength(4);
  });

  it('follow: false ends with the stream; a 204 ends it with no event', async () => {
    const { client, lastEventIds } = await serve((request, response) => {
      expect(request.url).toMatch(/follow=false/);
      if (request.url?.includes('ses_empty')) {
        response.writeHead(204);
        response.end();
        return;
      }
      openStream(response);
      response.end(started);
    });
    expect((await collect(client.events('ses_a', { follow: false }))).map((event) => event.id)).toEqual([
      '1-0',
    ]);
    expect(await collect(client.events('ses_empty', { follow: false }))).toEqual([]);
    expect(lastEventIds).toHaveLength(2);
  });
});
