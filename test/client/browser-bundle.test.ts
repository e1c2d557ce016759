import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';

// ratchet/client as a browser would load it: bundled for the browser platform (a Node built-in anywhere in
// its graph fails the build), then run where only the web platform's globals exist (no process, Buffer,
// require) against a loopback server.

const repoRoot = resolve(import.meta.dirname, '../..');
// esbuild comes with tsx (a dependency), which is what runs TypeScript here anyway.
const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx'))(
  'esbuild',
) as typeof import('esbuild');

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
});

const time = '2026-01-01T00:00:00.000Z';
const usage = { input_tokens: 1, output_tokens: 2, cached_input_tokens: 0, requests: 1 };
const events = [
  { id: '1-0', kind: 'run_started', run_id: 'run_a', agent: 'agent', time, data: { input: 'go' } },
  {
    id: '2-0',
    kind: 'run_completed',
    run_id: 'run_a',
    agent: 'agent',
    time,
    data: { result: 'ok', usage, iterations: 1 },
  },
];

async function bundle(): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [resolve(repoRoot, 'src/client/index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'ratchetClient',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

/** A context with the web platform's globals only. */
function browserLikeContext() {
  return createContext({
    fetch,
    Headers,
    Request,
    Response,
    ReadableStream,
    AbortController,
    AbortSignal,
    DOMException,
    TextDecoder,
    TextEncoder,
    URL,
    URLSearchParams,
    setTimeout,
    clearTimeout,
    structuredClone,
    console,
  });
}

describe('ratchet/client in a browser-like context', () => {
  it('bundles for the browser and reads an answer and an event stream without Node globals', async () => {
    server = createServer((request, response) => {
      if (request.url === '/healthz') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ status: 'ok' }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        events
          .map((event) => `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`)
          .join(''),
      );
    });
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');

    const context = browserLikeContext();
    runInContext(await bundle(), context);
    expect(runInContext('typeof process + typeof Buffer + typeof require', context)).toBe(
      'undefinedundefinedundefined',
    );
    context.baseUrl = `http://127.0.0.1:${address.port}`;
    const outcome = await runInContext(
      `(async () => {
        const client = new ratchetClient.RatchetClient({ baseUrl });
        const health = await client.health();
        const received = [];
        for await (const event of client.events('ses_a', { follow: false })) received.push(event);
        return JSON.stringify({ health, received });
      })()`,
      context,
    );
    expect(JSON.parse(outcome)).toEqual({ health: { status: 'ok' }, received: events });
  });

  it('fails to bundle when the graph reaches a Node built-in (the check can fail)', async () => {
    await expect(
      esbuild.build({
        stdin: { contents: "import { readFileSync } from 'node:fs'; export const read = readFileSync;" },
        bundle: true,
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      }),
    ).rejects.toThrow(/node:fs/);
  });
});
