import { afterEach, describe, expect, it } from 'vitest';
import type { ApiEngine } from '../../src/api/index.js';
import { RatchetError } from '../../src/errors/index.js';
import { eventKinds } from '../../src/events/event.js';
import { createLogger } from '../../src/log/index.js';
import { ApiHarness, type ApiHarnessOptions } from './api-harness.js';
import { SseClient } from './sse-client.js';

let api: ApiHarness | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await api?.close();
  api = undefined;
});

async function start(options: Partial<ApiHarnessOptions> = {}): Promise<ApiHarness> {
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, ...options });
  return api;
}

function capturingLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => lines.push(line) } });
  return { logger, output: () => lines.join('') };
}

/** An engine whose getRun fails as given. */
function failingGetRun(error: unknown) {
  return (engine: ApiEngine): ApiEngine =>
    Object.assign(Object.create(engine) as ApiEngine, {
      getRun: async () => {
        throw error;
      },
    });
}

describe('errors', () => {
  it('413 with the error shape for a body over api.body_limit_bytes', async () => {
    const harness = await start({ api: { body_limit_bytes: 1024 } });
    const response = await harness.request('POST', '/v1/runs', { body: { input: 'x'.repeat(2000) } });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({
      error: {
        code: 'payload_too_large',
        message: 'the request body is larger than 1024 bytes',
        details: {
          issues: [{ location: 'body', path: '', message: 'larger than 1024 bytes (api.body_limit_bytes)' }],
          limit_bytes: 1024,
        },
      },
    });
    const small = await harness.request('POST', '/v1/runs', { body: { input: 'x'.repeat(500) } });
    expect(small.status).toBe(202);
  });

  it('400 for JSON that does not parse, 415 for another media type, 404 for an unknown route', async () => {
    const harness = await start({ worker: false });
    const broken = await harness.request('POST', '/v1/runs', { rawBody: '{"input": ' });
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('invalid_request');
    const text = await harness.request('POST', '/v1/runs', {
      rawBody: 'input',
      headers: { 'content-type': 'application/xml' },
    });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('unsupported_media_type');
    const route = await harness.request('GET', '/v1/nothing?here=1');
    expect(route.status).toBe(404);
    expect(route.body).toEqual({
      error: { code: 'not_found', message: 'no route GET /v1/nothing', details: { resource: 'route' } },
    });
  });

  it('a server fault is a 500 with a generic message and the request id; the cause is only logged', async () => {
    const { logger, output } = capturingLogger();
    const harness = await start({
      worker: false,
      logger,
      wrapEngine: failingGetRun(new Error('cannot parse record at ratchet:{0}:run:x (internal detail)')),
    });
    const response = await harness.request('GET', '/v1/runs/run_0000000000000000_0000000000');
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: {
        code: 'internal',
        message: 'internal server error',
        details: { request_id: expect.any(String) },
      },
    });
    expect(JSON.stringify(response.body)).not.toContain('internal detail');
    expect(output()).toContain('internal detail');
    expect(output()).toContain(response.body.error.details.request_id);
  });

  it('an internal RatchetError is a 500 too, and Redis being away is a 503', async () => {
    const internal = await start({
      worker: false,
      wrapEngine: failingGetRun(new RatchetError('record_invalid', 'run record at key k does not parse')),
    });
    const fault = await internal.request('GET', '/v1/runs/run_0000000000000000_0000000000');
    expect(fault.status).toBe(500);
    expect(fault.body.error.message).toBe('internal server error');
    await internal.close();

    const away = await start({
      worker: false,
      wrapEngine: failingGetRun(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    });
    const unavailable = await away.request('GET', '/v1/runs/run_0000000000000000_0000000000');
    expect(unavailable.status).toBe(503);
    expect(unavailable.body.error.code).toBe('unavailable');
  });
});

describe('health and agents', () => {
  it('/healthz, /readyz and /v1/agents', async () => {
    const harness = await start({ worker: false });
    expect(await harness.request('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await harness.request('GET', '/readyz')).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok', config: 'ok' } },
    });
    expect(await harness.request('GET', '/v1/agents')).toMatchObject({
      status: 200,
      body: { agents: [{ name: 'agent', description: 'the agent under test', usage: { requests: 0 } }] },
    });
  });

  it('/readyz is 503 when Redis does not answer', async () => {
    const harness = await start({
      worker: false,
      pingRedis: async () => {
        throw new Error('Connection is closed.');
      },
    });
    const response = await harness.request('GET', '/readyz');
    expect(response.status).toBe(503);
    expect(response.body.error).toMatchObject({
      code: 'unavailable',
      details: { checks: { redis: 'unreachable', config: 'ok' } },
    });
  });
});

describe('bearer tokens', () => {
  const token = 'secret-token-0123456789';
  const otherToken = 'another-token-9876543210';
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

  it('every route but /healthz and /readyz needs a configured token: 401 without it or with a wrong one', async () => {
    const { logger, output } = capturingLogger();
    const harness = await start({ api: { tokens: [token, otherToken] }, logger });

    const missing = await harness.request('GET', '/v1/agents');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.body.error.code).toBe('unauthorized');
    for (const headers of [bearer('wrong-token-0123456789'), bearer(`${token}x`), { authorization: token }]) {
      const refused = await harness.request('GET', '/v1/agents', { headers });
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
    }
    expect((await harness.request('GET', '/v1/agents', { headers: bearer(token) })).status).toBe(200);
    expect((await harness.request('GET', '/v1/agents', { headers: bearer(otherToken) })).status).toBe(200);
    const created = await harness.request('POST', '/v1/sessions', { body: {}, headers: bearer(token) });
    expect(created.status).toBe(201);
    expect((await harness.request('POST', '/v1/sessions', { body: {} })).status).toBe(401);
    expect((await harness.request('GET', '/openapi.json')).status).toBe(401);
    expect((await harness.request('GET', '/v1/unknown')).status).toBe(401);
    expect((await fetch(`${harness.url}/docs`)).status).toBe(401);

    expect((await harness.request('GET', '/healthz')).status).toBe(200);
    expect((await harness.request('GET', '/readyz')).status).toBe(200);

    // Tokens never reach the logs, whatever the outcome of the request.
    expect(output()).toContain('incoming request');
    expect(output()).not.toContain(token);
    expect(output()).not.toContain(otherToken);
  });

  it('the event stream needs the token too', async () => {
    const harness = await start({ api: { tokens: [token] } });
    const submitted = await harness.request('POST', '/v1/runs', {
      body: { input: 'go' },
      headers: bearer(token),
    });
    const url = `${harness.url}/v1/sessions/${submitted.body.session_id}/events`;

    const refused = new SseClient(url, eventKinds);
    clients.push(refused);
    await refused.until(() => refused.errors.length > 0);
    expect(refused.errors[0]?.code).toBe(401);

    const accepted = new SseClient(url, eventKinds, { token });
    clients.push(accepted);
    await accepted.until(() => accepted.events.some((event) => event.type === 'run_completed'));
  });
});
