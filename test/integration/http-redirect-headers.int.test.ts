import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

/** Two loopback servers on different ports: two origins. Each records the headers of every request. */
interface RecordingServer {
  server: Server;
  origin: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
}

let first: RecordingServer;
let second: RecordingServer;

async function recordingServer(redirects: (path: string) => string | undefined): Promise<RecordingServer> {
  const recording: RecordingServer = { server: createServer(), origin: '', requests: [] };
  recording.server.on('request', (request, response) => {
    const path = request.url ?? '/';
    recording.requests.push({ path, headers: request.headers });
    const location = redirects(path);
    if (location !== undefined) {
      response.writeHead(307, { location });
      response.end();
    } else response.end('landed');
  });
  await new Promise<void>((resolve) => recording.server.listen(0, '127.0.0.1', resolve));
  recording.origin = `http://127.0.0.1:${(recording.server.address() as AddressInfo).port}`;
  return recording;
}

beforeAll(async () => {
  second = await recordingServer(() => undefined);
  first = await recordingServer((path) =>
    path === '/elsewhere' ? `${second.origin}/landing` : path === '/here' ? '/landing' : undefined,
  );
});
afterAll(async () => {
  for (const { server } of [first, second]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

let harness: Harness | undefined;
beforeEach(() => {
  first.requests = [];
  second.requests = [];
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The model sends credentials in headers the tool cannot know are credentials. */
const credentialHeaders = {
  'X-Api-Key': 'secret-api-key',
  'X-Custom-Token': 'secret-token',
  Authorization: 'Bearer secret-bearer',
  Accept: 'text/plain',
};

function requestScript(path: string): Script {
  return {
    replies: [
      {
        tool_calls: [
          { name: 'http_request', arguments: { url: `${first.origin}${path}`, headers: credentialHeaders } },
        ],
      },
      { text: 'done' },
    ],
  };
}

async function run(path: string): Promise<void> {
  harness = new Harness({
    script: requestScript(path),
    agent: { toolboxes: ['http'] },
    // Loopback is refused by default; the test servers are trusted by address.
    config: { tools: { http: { private_hosts: ['127.0.0.1'] } } },
  });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'fetch it' });
  const finished = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
  expect(finished.status).toBe('completed');
  const [result] = (await harness.transcript(sessionId)).flatMap((message) => toolResultsOf(message));
  expect(result).toMatchObject({ is_error: false });
  expect(JSON.parse(result?.content ?? '')).toMatchObject({ status: 200, body: 'landed' });
}

describe('http: credential headers stay with their origin', () => {
  it('a redirect to another origin gets none of the headers the model set, but the harmless ones', async () => {
    await run('/elsewhere');
    expect(first.requests[0]?.headers).toMatchObject({ 'x-api-key': 'secret-api-key' });
    expect(second.requests).toHaveLength(1);
    const forwarded = second.requests[0]?.headers ?? {};
    expect(JSON.stringify(forwarded)).not.toContain('secret');
    expect(forwarded['x-api-key']).toBeUndefined();
    expect(forwarded['x-custom-token']).toBeUndefined();
    expect(forwarded.authorization).toBeUndefined();
    expect(forwarded.accept).toBe('text/plain');
  });

  it('a redirect within the origin keeps them', async () => {
    await run('/here');
    expect(second.requests).toEqual([]);
    expect(first.requests.map((request) => request.path)).toEqual(['/here', '/landing']);
    expect(first.requests[1]?.headers).toMatchObject({
      'x-api-key': 'secret-api-key',
      'x-custom-token': 'secret-token',
      authorization: 'Bearer secret-bearer',
    });
  });
});
