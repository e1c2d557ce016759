import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Message } from '../../../src/chat/index.js';
import type { RatchetError } from '../../../src/errors/index.js';
import type { Completer, Completion, CompletionRequest } from '../../../src/models/index.js';
import { completerOf, failureOf, neverAborted, requestOf } from './provider-fixtures.js';

/** A request the server received, its body parsed as JSON. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages` or `/v1beta/models/gemini-2.5-flash:generateContent`. */
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read provider wire JSON by path
  body: any;
  /** Set when the connection closed before the reply was written whole (the client hung up on it). */
  cutShort: boolean;
}

/** How the server answers one request. */
export type FakeReply =
  /** `delayMs`: the headers and body are sent this long after the request (a model generating a whole reply). */
  | { json: unknown; status?: number; headers?: Record<string, string>; delayMs?: number }
  /** `stall`: the text is sent, then nothing more, the response left open (a body that stops midway). */
  | {
      text: string;
      status?: number;
      headers?: Record<string, string>;
      contentType?: string;
      stall?: boolean;
    }
  /**
   * Server-sent events: each item is one `data:` payload (objects are JSON-encoded), with optional names.
   * `intervalMs` spaces the events out (a slow but steady stream); `stall` leaves the stream open after them.
   */
  | {
      sse: readonly (SseEvent | unknown)[];
      headers?: Record<string, string>;
      done?: boolean;
      cutOff?: boolean;
      intervalMs?: number;
      stall?: boolean;
    }
  /** Never answers (timeouts). */
  | { hang: true }
  /** Sends a 200 and its headers, then nothing, the response left open. */
  | { headersOnly: true; contentType: string }
  /** Closes the connection without an answer (network failures). */
  | { drop: true };

export interface SseEvent {
  event: string;
  data: unknown;
}

export interface FakeProviderServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** Queues replies, one per coming request, in order. */
  reply(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server that plays a model provider: it records each request and answers with the next queued
 * reply, written in the provider's wire format by the test. Unqueued requests get a 599.
 */
export async function startFakeProviderServer(): Promise<FakeProviderServer> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: text === '' ? undefined : JSON.parse(text),
        cutShort: false,
      };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) recorded.cutShort = true;
      });
      void answer(response, queue.shift());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function answer(response: ServerResponse, reply: FakeReply | undefined): Promise<void> {
  if (reply === undefined) {
    response.writeHead(599, { 'content-type': 'text/plain' }).end('no reply queued');
  } else if ('hang' in reply) {
    // Left open: the client's timeout or abort ends it (close() destroys it otherwise).
  } else if ('headersOnly' in reply) {
    response.writeHead(200, { 'content-type': reply.contentType });
    response.flushHeaders();
  } else if ('drop' in reply) {
    response.socket?.destroy();
  } else if ('json' in reply) {
    if (reply.delayMs !== undefined) await sleep(reply.delayMs);
    if (response.destroyed) return;
    response
      .writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
      .end(JSON.stringify(reply.json));
  } else if ('text' in reply) {
    response.writeHead(reply.status ?? 200, {
      'content-type': reply.contentType ?? 'application/json',
      ...reply.headers,
    });
    if (reply.stall) response.write(reply.text);
    else response.end(reply.text);
  } else {
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    for (const item of reply.sse) {
      if (reply.intervalMs !== undefined) {
        await sleep(reply.intervalMs);
        if (response.destroyed) return;
      }
      const named = isSseEvent(item) ? item : undefined;
      const data = named ? named.data : item;
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      response.write(`${named ? `event: ${named.event}\n` : ''}data: ${payload}\n\n`);
    }
    // Left open after the events: the client's stall timers end it.
    if (reply.stall) return;
    if (reply.cutOff) {
      // Let the events reach the client first, then break the connection mid-response.
      setTimeout(() => response.socket?.destroy(), 20);
      return;
    }
    if (reply.done) response.write('data: [DONE]\n\n');
    response.end();
  }
}

function isSseEvent(item: unknown): item is SseEvent {
  return typeof item === 'object' && item !== null && 'event' in item && 'data' in item;
}

/** A fake provider server for one describe block and ways to send requests to it through a completer. */
export interface FakeProvider {
  readonly server: FakeProviderServer;
  /** A completer of the kind pointed at the server, with the block's fields and `fields` over them. */
  completer(fields?: Record<string, unknown>): Completer;
  /** Queues `reply`, sends `request` (not aborted), and returns the completion and the request the server got. */
  send(
    reply: FakeReply,
    request: CompletionRequest,
    fields?: Record<string, unknown>,
  ): Promise<{ completion: Completion; sent: RecordedRequest }>;
  /** Queues `reply`, sends `request` (not aborted), and returns the RatchetError it fails with. */
  sendFailure(
    reply: FakeReply,
    request: CompletionRequest,
    fields?: Record<string, unknown>,
  ): Promise<RatchetError>;
  /** Queues `reply`, sends `messages` streaming, and returns the completion, its text deltas and the request. */
  stream(
    reply: FakeReply,
    messages: readonly Message[],
  ): Promise<{ completion: Completion; deltas: string[]; sent: RecordedRequest }>;
  /** Queues `reply`, sends `messages` streaming, and returns the RatchetError it fails with and the deltas before. */
  streamFailure(
    reply: FakeReply,
    messages: readonly Message[],
  ): Promise<{ error: RatchetError; deltas: string[] }>;
}

/** Checks that the one request sent went to `path` and carried each of `headers` with that exact value. */
export function expectSentTo(
  sent: RecordedRequest,
  path: string,
  headers: Record<string, string> = {},
): void {
  expect(sent.path).toBe(path);
  for (const [name, value] of Object.entries(headers)) expect(sent.headers[name]).toBe(value);
}

/**
 * A fake provider server for one describe block (started once, its recorded requests cleared before each
 * test) and a completer of `kind` pointed at it. `baseFields` gives the kind's fields for the server origin.
 */
export function useFakeProvider(
  kind: string,
  model: string,
  baseFields: (origin: string) => Record<string, unknown>,
): FakeProvider {
  let server: FakeProviderServer | undefined;
  const started = () => {
    if (!server) throw new Error('the fake provider server is not started (use it inside tests)');
    return server;
  };
  beforeAll(async () => {
    server = await startFakeProviderServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    started().requests.length = 0;
  });
  const completer = (fields: Record<string, unknown> = {}) =>
    completerOf(kind, model, { ...baseFields(started().origin), ...fields });
  const firstSent = () => {
    const [sent] = started().requests;
    if (!sent) throw new Error('the fake provider server got no request');
    return sent;
  };
  const streaming = (messages: readonly Message[], deltas: string[]) =>
    requestOf(messages, { onTextDelta: (delta) => deltas.push(delta) });
  return {
    get server() {
      return started();
    },
    completer,
    async send(reply, request, fields) {
      started().reply(reply);
      const completion = await completer(fields).complete(request, neverAborted());
      return { completion, sent: firstSent() };
    },
    sendFailure(reply, request, fields) {
      started().reply(reply);
      return failureOf(completer(fields).complete(request, neverAborted()));
    },
    async stream(reply, messages) {
      started().reply(reply);
      const deltas: string[] = [];
      const completion = await completer().complete(streaming(messages, deltas), neverAborted());
      return { completion, deltas, sent: firstSent() };
    },
    async streamFailure(reply, messages) {
      started().reply(reply);
      const deltas: string[] = [];
      const error = await failureOf(completer().complete(streaming(messages, deltas), neverAborted()));
      return { error, deltas };
    },
  };
}
