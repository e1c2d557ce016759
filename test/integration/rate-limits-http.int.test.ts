import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await harness?.close();
  await close?.();
  harness = undefined;
});

/** A /v1/chat/completions server that answers at once and notes when each request arrived. */
async function countingServer() {
  const arrivals: number[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrivals.push(Date.now());
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1741570283,
          model: 'local-model',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'done' },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, arrivals };
}

// The limiter grants requests in Redis; the server sees them a little later, each with its own delay (more
// on a busy machine). So the check allows for that delay: rpm + 1 arrivals closer together than half a
// window would need one of them delayed by half a window (1.5 s) — while without a limiter shared by the two
// processes, four requests arrive together.
it('the requests a provider server receives from two worker processes never exceed its rpm per window', async () => {
  const windowMs = 3000;
  const deliverySlackMs = windowMs / 2;
  const rpm = 2;
  const server = await countingServer();
  harness = new Harness({
    script: { replies: [] },
    worker: { concurrency: 2 },
    providerEntry: {
      name: 'model',
      kind: 'openai_compatible',
      model: 'local-model',
      base_url: server.baseUrl,
      rate_limit: { rpm, window_ms: windowMs },
    },
  });
  const workers = [harness.spawnWorker(), harness.spawnWorker()];
  for (const worker of workers) {
    await waitFor(() => worker.output().includes('worker started'), 60_000, 'the workers to start');
  }
  const started = await Promise.all(
    Array.from({ length: 6 }, (_unused, index) => harness?.engine.startRun({ input: `task ${index}` })),
  );
  for (const run of started) {
    expect((await harness.engine.waitForRun(run?.runId ?? '', { timeoutMs: 90_000 })).status).toBe(
      'completed',
    );
  }
  const arrivals = [...server.arrivals].sort((a, b) => a - b);
  expect(arrivals).toHaveLength(6);
  for (const [index, start] of arrivals.entries()) {
    const inWindow = arrivals.slice(index).filter((time) => time < start + windowMs - deliverySlackMs).length;
    expect(
      inWindow,
      `arrivals at ${arrivals.map((time) => time - (arrivals[0] ?? 0)).join(', ')} ms`,
    ).toBeLessThanOrEqual(rpm);
  }
}, 180_000);
