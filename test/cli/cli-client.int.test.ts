import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiUnreachableError, apiFailure, connectApi } from '../../src/cli/cli-client.js';
import type { RatchetClientEvent } from '../../src/client/index.js';

// The CLI's connection to the API (ratchet/client with the CLI's fetch) against a small server on loopback
// that answers each connection of the event stream as the test says: a lost stream is told, with why, when
// the client reconnects, and no event is missed or repeated.

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: Handler): Promise<{ url: string; lastEventIds: (string | undefined)[] }> {
  const lastEventIds: (string | undefined)[] = [];
  server = createServer((request, response) => {
    lastEventIds.push(request.headers['last-event-id'] as string | undefined);
    handler(request, response, lastEventIds.length - 1);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { url: `http://127.0.0.1:${address.port}`, lastEventIds };
}

const usage = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, requests: 1 };

function frame(id: string, kind: string, data: unknown): string {
  const event = { id, kind, run_id: 'run_a', agent: 'agent', time: '2026-01-01T00:00:00.000Z', data };
  return `id: ${id}\nevent: ${kind}\ndata: ${JSON.stringify(event)}\n\n`;
}

const started = frame('1-0', 'run_started', { input: 'go' });
const progress = frame('2-0', 'progress', { fraction: null, message: 'half' });
const completed = frame('3-0', 'run_completed', { result: 'done', usage, iterations: 1 });

function sse(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
}

async function follow(url: string): Promise<{ ids: string[]; lost: string[] }> {
  const api = connectApi(url, undefined);
  const lost: string[] = [];
  const stop = api.onStreamLost((reason) => lost.push(reason));
  const ids: string[] = [];
  const events: AsyncIterable<RatchetClientEvent> = api.client.events('ses_a', {
    untilRunEnds: 'run_a',
    retryDelayMs: 10,
  });
  for await (const event of events) ids.push(event.id);
  stop();
  return { ids, lost };
}

describe("the CLI's API connection", () => {
  it('tells a stream the server ended, and resumes after the last event', async () => {
    const { url, lastEventIds } = await serve((_request, response, index) => {
      sse(response);
      response.end(index === 0 ? started : progress + completed);
    });
    expect(await follow(url)).toEqual({
      ids: ['1-0', '2-0', '3-0'],
      lost: ['the server ended the event stream'],
    });
    expect(lastEventIds).toEqual([undefined, '1-0']);
  });

  it('tells a connection cut in the middle of a frame, which is never read half', async () => {
    const { url, lastEventIds } = await serve((_request, response, index) => {
      sse(response);
      if (index === 0) {
        response.write(started + progress.slice(0, 30), () => response.destroy());
      } else {
        response.end(progress + completed);
      }
    });
    const { ids, lost } = await follow(url);
    expect(ids).toEqual(['1-0', '2-0', '3-0']);
    expect(lost).toHaveLength(1);
    expect(lost[0]).not.toBe('the server ended the event stream');
    expect(lastEventIds).toEqual([undefined, '1-0']);
  });

  it('names the API it cannot reach', async () => {
    const { url } = await serve(() => {});
    const closed = server;
    server = undefined;
    await new Promise<void>((resolve) => closed?.close(() => resolve()));
    const error = await connectApi(url, undefined)
      .client.get('run_a')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect(apiFailure(error)).toBe(`cannot reach the API at ${url}: ECONNREFUSED`);
  });
});
