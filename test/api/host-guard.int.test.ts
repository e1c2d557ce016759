import { afterEach, describe, expect, it } from 'vitest';
import { rawInitializeRequest } from '../mcp-server/mcp-client.js';
import { ApiHarness, type ApiHarnessOptions } from './api-harness.js';
import { rawRequest, rawSocketRequest } from './raw-http.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(options: Partial<ApiHarnessOptions> = {}): Promise<ApiHarness> {
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false, ...options });
  return api;
}

const token = 'host-guard-token-0123456789';
const mcpHeaders = { accept: 'application/json, text/event-stream' };

/** What a browser sends after evil.example rebound its name to 127.0.0.1: its own name as Host. */
function rebound(port: string): Record<string, string> {
  return { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
}

describe('the DNS rebinding guard, without api.tokens', () => {
  it('refuses a foreign Host or Origin on /v1 and /mcp with 403 naming api.allowed_hosts or api.allowed_origins', async () => {
    const harness = await start();
    const port = new URL(harness.url).port;
    const session = await harness.request('POST', '/v1/sessions', { body: {} });
    const requests = [
      { method: 'GET', path: '/v1/agents' },
      { method: 'GET', path: `/v1/sessions/${session.body.id}` },
      { method: 'GET', path: `/v1/sessions/${session.body.id}/events?follow=false` },
      { method: 'POST', path: '/v1/runs', body: JSON.stringify({ input: 'hi' }) },
      { method: 'POST', path: '/v1/sessions', body: '{}' },
      { method: 'DELETE', path: `/v1/sessions/${session.body.id}` },
      { method: 'POST', path: '/mcp', body: JSON.stringify(rawInitializeRequest) },
    ];
    const hostile = [
      rebound(port),
      { host: `evil.example:${port}` },
      { host: 'evil.example' },
      { host: `127.0.0.1.evil.example:${port}` },
      { host: `localhost.evil.example:${port}` },
      // A page of another site posting to the real local address (no CORS needed to cause the effect).
      { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      { host: `localhost:${port}`, origin: 'null' },
      // A page of another local server (another port of the same loopback name, or another loopback name).
      { host: `localhost:${port}`, origin: 'http://localhost:3000' },
      { host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` },
      { host: `127.0.0.1:${port}`, origin: `https://127.0.0.1:${Number(port) + 1}` },
    ];
    for (const request of requests) {
      for (const headers of hostile) {
        const response = await rawRequest(harness.url, {
          ...request,
          headers: { ...mcpHeaders, ...headers },
        });
        expect({ ...request, headers, status: response.status }).toEqual({
          ...request,
          headers,
          status: 403,
        });
        expect(response.json.error.code).toBe('forbidden');
        const setting = response.json.error.details.header === 'host' ? 'hosts' : 'origins';
        expect(response.json.error.message).toMatch(`api.allowed_${setting}`);
      }
    }
    // Nothing of the refused requests happened.
    const still = await harness.request('GET', `/v1/sessions/${session.body.id}`);
    expect(still.status).toBe(200);
  });

  it("accepts loopback names with any port, and the request's own origin", async () => {
    const harness = await start();
    const port = new URL(harness.url).port;
    const accepted: Record<string, string>[] = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}` },
      { host: `LocalHost.:${port}` },
      { host: `[::1]:${port}` },
      { host: 'localhost' },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      // Behind a TLS proxy that keeps Host: the scheme differs, the host and port do not.
      { host: `localhost:${port}`, origin: `https://localhost:${port}` },
      { host: `[::1]:${port}`, origin: `http://[::1]:${port}` },
    ];
    for (const headers of accepted) {
      const response = await rawRequest(harness.url, { method: 'GET', path: '/v1/agents', headers });
      expect({ headers, status: response.status }).toEqual({ headers, status: 200 });
    }
  });

  it('accepts the pages of api.allowed_origins (a browser MCP client on another port), and no other port', async () => {
    const harness = await start({ api: { allowed_origins: ['http://localhost:6274'] } });
    const port = new URL(harness.url).port;
    const mcp = (origin: string) =>
      rawRequest(harness.url, {
        method: 'POST',
        path: '/mcp',
        body: JSON.stringify(rawInitializeRequest),
        headers: { ...mcpHeaders, host: `localhost:${port}`, origin },
      });
    expect((await mcp('http://localhost:6274')).status).toBe(200);
    expect((await mcp('http://localhost:6275')).status).toBe(403);
    expect((await mcp('http://127.0.0.1:6274')).status).toBe(403);
  });

  it('accepts the names of api.allowed_hosts as Host, and api.allowed_origins as Origin', async () => {
    const harness = await start({
      api: {
        allowed_hosts: ['ratchet.internal', 'UI.Example'],
        allowed_origins: ['https://console.example'],
      },
    });
    const port = new URL(harness.url).port;
    const listed: Record<string, string>[] = [
      { host: `ratchet.internal:${port}` },
      { host: 'ratchet.internal' },
      { host: `ratchet.internal:${port}`, origin: `http://ratchet.internal:${port}` },
      // A proxy that rewrites Host to the upstream's address, for a console served at its own origin.
      { host: `127.0.0.1:${port}`, origin: 'https://console.example' },
      { host: `localhost:${port}` },
    ];
    for (const headers of listed) {
      const response = await rawRequest(harness.url, { method: 'GET', path: '/v1/agents', headers });
      expect({ headers, status: response.status }).toEqual({ headers, status: 200 });
    }
    const foreign = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: rebound(port),
    });
    expect(foreign.status).toBe(403);
    // A name of allowed_hosts is a Host, not an origin whose pages may send requests.
    const hostNotOrigin = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: { host: `ratchet.internal:${port}`, origin: 'https://ui.example' },
    });
    expect(hostNotOrigin.status).toBe(403);
    expect(hostNotOrigin.json.error.details).toEqual({ header: 'origin' });
  });

  it('leaves /healthz and /readyz to any Host: orchestrators probe by a pod address', async () => {
    const harness = await start();
    for (const path of ['/healthz', '/readyz']) {
      const response = await rawRequest(harness.url, {
        method: 'GET',
        path,
        headers: { host: 'evil.example' },
      });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
    }
  });
});

describe('the DNS rebinding guard, with api.tokens', () => {
  it('is off unless api.allowed_hosts is set: a rebinding page cannot know the token', async () => {
    const harness = await start({ api: { tokens: [token] } });
    const port = new URL(harness.url).port;
    const withoutToken = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: rebound(port),
    });
    expect(withoutToken.status).toBe(401);
    const withToken = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: { ...rebound(port), authorization: `Bearer ${token}` },
    });
    expect(withToken.status).toBe(200);
  });

  it('applies api.allowed_hosts when it is set, whatever the token', async () => {
    const harness = await start({ api: { tokens: [token], allowed_hosts: ['ratchet.internal'] } });
    const port = new URL(harness.url).port;
    const authorization = `Bearer ${token}`;
    const foreign = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: { ...rebound(port), authorization },
    });
    expect(foreign.status).toBe(403);
    const listed = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/agents',
      headers: { host: `ratchet.internal:${port}`, authorization },
    });
    expect(listed.status).toBe(200);
  });
});

describe('what the guard reads: one Host, and a path as the target (raw sockets: Node’s client sends neither)', () => {
  /** A request written byte for byte: `lines` are the request line and the headers. */
  function send(harness: ApiHarness, lines: string[], body = '') {
    return rawSocketRequest(harness.url, [...lines, 'Connection: close', '', body].join('\r\n'));
  }

  it('refuses an absolute-form target, to a foreign or to its own authority, on every route', async () => {
    const harness = await start();
    const own = new URL(harness.url).host;
    for (const target of [
      'http://other.example/v1/agents',
      `http://${own}/v1/agents`,
      'http://other.example/healthz',
      'http://other.example:80/v1/sessions/ses_x',
    ]) {
      const answer = await send(harness, [`GET ${target} HTTP/1.1`, `Host: ${own}`]);
      expect({ target, status: answer.status }).toEqual({ target, status: 400 });
      expect(answer.json).toEqual({
        error: {
          code: 'invalid_request',
          message:
            'invalid request: path: the request target must be a path ("/v1/…"); absolute-form is for proxies',
          details: {
            issues: [
              {
                location: 'path',
                path: '',
                message: 'the request target must be a path ("/v1/…"); absolute-form is for proxies',
              },
            ],
          },
        },
      });
    }
    // A POST in absolute form creates nothing. (BullMQ's queue metadata, `…:meta`, is left out: the engine's
    // queues write it on their own when they start, which may fall between the two reads.)
    const keys = async () =>
      (await harness.harness.redis.keys(`${harness.harness.prefix}*`)).filter(
        (key) => !key.endsWith(':meta'),
      );
    const before = await keys();
    const post = await send(
      harness,
      [
        'POST http://other.example/v1/sessions HTTP/1.1',
        `Host: ${own}`,
        'Content-Type: application/json',
        'Content-Length: 2',
      ],
      '{}',
    );
    expect(post.status).toBe(400);
    expect(await keys()).toEqual(before);
  });

  it('refuses two Host headers (in either order) and two Origin headers', async () => {
    const harness = await start();
    const own = new URL(harness.url).host;
    const cases: [string[], string][] = [
      [[`Host: ${own}`, 'Host: evil.example'], 'host'],
      [['Host: evil.example', `Host: ${own}`], 'host'],
      [[`Host: ${own}`, `host: ${own}`], 'host'],
      [[`Host: ${own}`, `Origin: http://${own}`, 'Origin: http://evil.example'], 'origin'],
    ];
    for (const [headers, name] of cases) {
      const answer = await send(harness, ['GET /v1/agents HTTP/1.1', ...headers]);
      expect({ headers, status: answer.status }).toEqual({ headers, status: 400 });
      expect(answer.json.error.details.issues).toEqual([
        { location: 'headers', path: name, message: 'sent 2 times; send it once' },
      ]);
    }
  });

  it('refuses a Host that is a list or carries spaces or userinfo; with api.tokens the shape rules still hold', async () => {
    const harness = await start();
    const port = new URL(harness.url).port;
    for (const host of [
      `127.0.0.1:${port}, evil.example`,
      `127.0.0.1:${port},evil.example`,
      `127.0.0.1 evil.example`,
      `evil.example@127.0.0.1:${port}`,
    ]) {
      const answer = await send(harness, ['GET /v1/agents HTTP/1.1', `Host: ${host}`]);
      expect({ host, status: answer.status }).toEqual({ host, status: 403 });
      expect(answer.json.error.details).toEqual({ header: 'host' });
    }
    await harness.close();
    const withTokens = await start({ api: { tokens: [token] } });
    const own = new URL(withTokens.url).host;
    const absolute = await send(withTokens, [
      'GET http://other.example/v1/agents HTTP/1.1',
      `Host: ${own}`,
      `Authorization: Bearer ${token}`,
    ]);
    expect(absolute.status).toBe(400);
    const twice = await send(withTokens, [
      'GET /v1/agents HTTP/1.1',
      `Host: ${own}`,
      'Host: evil.example',
      `Authorization: Bearer ${token}`,
    ]);
    expect(twice.status).toBe(400);
  });
});
