import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyReply } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { SseConnection } from '../../src/api/sse-connection.js';
import type { RatchetEvent } from '../../src/events/event.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

function event(index: number): RatchetEvent {
  return {
    v: 1,
    id: `1700000000000-${index}`,
    kind: 'progress',
    run_id: 'run_x',
    agent: 'agent',
    time: '2026-01-01T00:00:00.000Z',
    data: { fraction: null, message: 'x'.repeat(4096) },
  };
}

it('a client that stops reading makes send wait, then is disconnected; nothing is buffered for it', async () => {
  let reportOutcome: (outcome: { sent: number; lastSend: boolean; waitedMs: number }) => void = () => {};
  const outcome = new Promise<{ sent: number; lastSend: boolean; waitedMs: number }>((resolve) => {
    reportOutcome = resolve;
  });
  const listening = createServer((request, response) => {
    const reply = { hijack() {}, raw: response } as unknown as FastifyReply;
    const connection = new SseConnection(reply, { keepAliveMs: 60_000, drainTimeoutMs: 300 });
    void (async () => {
      let sent = 0;
      let started = Date.now();
      // Far more than the socket buffers hold: the loop must stop at the first full buffer.
      for (let index = 0; index < 100_000; index += 1) {
        started = Date.now();
        if (!(await connection.send(event(index)))) {
          reportOutcome({ sent, lastSend: false, waitedMs: Date.now() - started });
          return;
        }
        sent += 1;
      }
      reportOutcome({ sent, lastSend: true, waitedMs: 0 });
    })();
    request.resume();
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  const { port } = listening.address() as AddressInfo;
  const response = await new Promise<IncomingMessage>((resolve) => {
    get(`http://127.0.0.1:${port}/`, resolve).on('error', () => {});
  });
  expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
  response.on('error', () => {});
  response.pause();

  const { sent, lastSend, waitedMs } = await outcome;
  expect(lastSend).toBe(false);
  expect(sent).toBeLessThan(100_000);
  expect(waitedMs).toBeGreaterThanOrEqual(250);
});
