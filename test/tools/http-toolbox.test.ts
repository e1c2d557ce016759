import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpToolbox } from '../../src/tools/builtin/http/http-toolbox.js';
import type { Resolver } from '../../src/tools/builtin/http/ssrf-guard.js';
import type { ToolBox } from '../../src/tools/index.js';
import { callError, callOk, callTool, toolContext, toolsSettings } from '../helpers/tool-calls.js';

/** A loopback server that records every request path it gets. */
let server: Server;
let port: number;
let hits: string[] = [];
const pngBytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe]);

function route(request: IncomingMessage, response: ServerResponse, body: string): void {
  const path = request.url ?? '/';
  const redirect = (location: string, status = 302) => {
    response.writeHead(status, { location });
    response.end();
  };
  if (path === '/hello') response.end('hello');
  else if (path === '/secret') response.end('the secret');
  else if (path === '/to-loopback-ip') redirect(`http://127.0.0.1:${port}/secret`);
  else if (path === '/to-hello') redirect('/hello');
  else if (path === '/to-echo') redirect('/echo');
  else if (path === '/see-other') redirect('/echo', 303);
  else if (path === '/to-other-origin') redirect(`http://127.0.0.1:${port}/echo`, 307);
  else if (path === '/loop') redirect('/loop');
  else if (path === '/big') response.end('y'.repeat(100_000));
  else if (path === '/image') {
    response.setHeader('content-type', 'image/png');
    response.end(pngBytes);
  } else if (path === '/latin1') {
    response.setHeader('content-type', 'text/plain; charset=iso-8859-1');
    response.end(Buffer.from([0x67, 0x72, 0xfc, 0xdf, 0x65]));
  } else if (path === '/slow') setTimeout(() => response.end('late'), 5_000).unref();
  else if (path === '/echo') {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ method: request.method, headers: request.headers, body }));
  } else {
    response.statusCode = 404;
    response.end('not found');
  }
}

beforeAll(async () => {
  server = createServer((request, response) => {
    hits.push(request.url ?? '/');
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => route(request, response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  hits = [];
});

/** `localhost` answers 127.0.0.1 only, so the test server (IPv4 loopback) is reached either way. */
const loopbackResolver: Resolver = async (hostname) => {
  if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
};

function toolbox(section: Record<string, unknown> = {}, resolve: Resolver = loopbackResolver): ToolBox {
  return httpToolbox({ settings: toolsSettings({ http: section }).http, resolve });
}

const trustLocalhost = { private_hosts: ['localhost'] };

describe('http: requests', () => {
  it('sends a request to an allowed host and returns status, headers and body', async () => {
    const result = await callOk(toolbox(trustLocalhost), 'http_request', {
      url: `http://localhost:${port}/hello`,
    });
    expect(result).toMatchObject({ status: 200, url: `http://localhost:${port}/hello`, body: 'hello' });
    expect(result.headers['content-length']).toBe('5');
  });

  it('returns a binary body as base64 (bytes intact) and a text body in its declared charset', async () => {
    const image = await callOk(toolbox(trustLocalhost), 'http_request', {
      url: `http://localhost:${port}/image`,
    });
    expect(image.body).toBeUndefined();
    expect(Buffer.from(image.body_base64, 'base64')).toEqual(pngBytes);
    const text = await callOk(toolbox(trustLocalhost), 'http_request', {
      url: `http://localhost:${port}/latin1`,
    });
    expect(text.body).toBe('grüße');
  });

  it('sends method, headers and body', async () => {
    const result = await callOk(toolbox(trustLocalhost), 'http_request', {
      method: 'POST',
      url: `http://localhost:${port}/echo`,
      headers: { 'content-type': 'text/plain', 'x-trace': 'abc' },
      body: 'payload',
    });
    const echo = JSON.parse(result.body);
    expect(echo).toMatchObject({ method: 'POST', body: 'payload', headers: { 'x-trace': 'abc' } });
  });

  it('follows redirects (a 303 turns into a GET without the body)', async () => {
    const tools = toolbox(trustLocalhost);
    const followed = await callOk(tools, 'http_request', { url: `http://localhost:${port}/to-hello` });
    expect(followed).toMatchObject({
      status: 200,
      body: 'hello',
      redirects: [`http://localhost:${port}/hello`],
    });
    const seeOther = await callOk(tools, 'http_request', {
      method: 'POST',
      url: `http://localhost:${port}/see-other`,
      body: 'x',
    });
    expect(JSON.parse(seeOther.body)).toMatchObject({ method: 'GET', body: '' });
  });

  it('sends only the declared harmless headers when a redirect leaves the origin', async () => {
    const tools = toolbox({ private_hosts: ['localhost', '127.0.0.1'] });
    const result = await callOk(tools, 'http_request', {
      url: `http://localhost:${port}/to-other-origin`,
      headers: {
        authorization: 'Bearer secret',
        'X-Api-Key': 'secret',
        'x-custom-token': 'secret',
        Accept: 'application/json',
        'user-agent': 'ratchet-test',
      },
    });
    const echo = JSON.parse(result.body);
    expect(JSON.stringify(echo.headers)).not.toContain('secret');
    expect(echo.headers).toMatchObject({ accept: 'application/json', 'user-agent': 'ratchet-test' });
  });

  it('forwards what tools.http.forward_headers_on_redirect lists, never credentials', async () => {
    const tools = toolbox({
      private_hosts: ['localhost', '127.0.0.1'],
      forward_headers_on_redirect: ['X-Trace'],
    });
    const result = await callOk(tools, 'http_request', {
      url: `http://localhost:${port}/to-other-origin`,
      headers: { 'x-trace': 'abc', accept: 'text/plain', cookie: 'session=secret' },
    });
    expect(JSON.parse(result.body).headers).toMatchObject({ 'x-trace': 'abc' });
    expect(JSON.parse(result.body).headers.accept).toBeUndefined();
    expect(() => toolsSettings({ http: { forward_headers_on_redirect: ['Authorization'] } })).toThrow(
      'credentials are never forwarded',
    );
  });

  it('keeps every header on a redirect within the origin', async () => {
    const result = await callOk(toolbox(trustLocalhost), 'http_request', {
      url: `http://localhost:${port}/to-echo`,
      headers: { 'x-api-key': 'secret', authorization: 'Bearer secret' },
    });
    expect(JSON.parse(result.body).headers).toMatchObject({
      'x-api-key': 'secret',
      authorization: 'Bearer secret',
    });
  });

  it('a 302 after a POST becomes a GET without the body and the headers describing it', async () => {
    const result = await callOk(toolbox(trustLocalhost), 'http_request', {
      method: 'POST',
      url: `http://localhost:${port}/to-echo`,
      headers: { 'content-type': 'application/json', 'content-language': 'en', 'x-kept': 'yes' },
      body: '{"a":1}',
    });
    const echo = JSON.parse(result.body);
    expect(echo).toMatchObject({ method: 'GET', body: '', headers: { 'x-kept': 'yes' } });
    expect(echo.headers['content-type']).toBeUndefined();
    expect(echo.headers['content-language']).toBeUndefined();
    expect(echo.headers['content-length']).toBeUndefined();
  });

  it('is declared not idempotent', () => {
    expect(toolbox().tools[0]?.idempotent).toBe(false);
  });
});

describe('http: internal destinations are refused', () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:9/hello', 'is a loopback address'],
    ['10.x', 'http://10.1.2.3/', 'is a private address'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', 'is a link-local address'],
    ['[::1]', 'http://[::1]:8080/', 'is a loopback address'],
    ['IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]/', 'is a loopback address'],
    ['hex IPv4', 'http://0x7f.1/', 'is a loopback address'],
    ['0.0.0.0', 'http://0.0.0.0/', 'is a unspecified address'],
    ['fc00::/7', 'http://[fd00::1]/', 'is a private address'],
  ])('refuses %s', async (_label, url, message) => {
    const refusal = await callError(toolbox(), 'http_request', { url });
    expect(refusal).toContain(message);
    expect(refusal).toContain('tools.http.private_hosts');
  });

  it('refuses a host name that resolves to loopback (checked after DNS), without connecting', async () => {
    const refusal = await callError(toolbox(), 'http_request', { url: `http://localhost:${port}/hello` });
    expect(refusal).toContain('"localhost" resolves to 127.0.0.1, which is a loopback address');
    expect(hits).toEqual([]);
  });

  it('refuses localhost as the system resolver answers it', async () => {
    const tools = httpToolbox({ settings: toolsSettings().http });
    const refusal = await callError(tools, 'http_request', { url: `http://localhost:${port}/hello` });
    expect(refusal).toMatch(/"localhost" resolves to (127\.0\.0\.1|::1), which is a loopback address/);
    expect(hits).toEqual([]);
  });

  it('tries each checked address in turn (an IPv6 answer first, the server on IPv4)', async () => {
    const bothFamilies: Resolver = async () => [
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ];
    const tools = toolbox({ private_hosts: ['dual.test'] }, bothFamilies);
    expect((await callOk(tools, 'http_request', { url: `http://dual.test:${port}/hello` })).body).toBe(
      'hello',
    );
  });

  it('checks every redirect: an allowed host redirecting to 127.0.0.1 is refused before connecting there', async () => {
    // localhost is trusted with private addresses; 127.0.0.1, the redirect's target, is not.
    const refusal = await callError(toolbox(trustLocalhost), 'http_request', {
      url: `http://localhost:${port}/to-loopback-ip`,
    });
    expect(refusal).toContain('"127.0.0.1" is a loopback address');
    expect(hits).toEqual(['/to-loopback-ip']);
  });

  it('checks the host allow-list on every hop', async () => {
    const allowList = { allow_hosts: ['localhost'], ...trustLocalhost };
    expect(
      await callOk(toolbox(allowList), 'http_request', { url: `http://localhost:${port}/hello` }),
    ).toMatchObject({
      status: 200,
    });
    expect(
      await callError(toolbox(allowList), 'http_request', { url: `http://localhost:${port}/to-loopback-ip` }),
    ).toContain('host "127.0.0.1" is not in tools.http.allow_hosts (localhost)');
    expect(
      await callError(toolbox({ allow_hosts: ['*.example.com'] }), 'http_request', {
        url: 'http://example.org/',
      }),
    ).toContain('is not in tools.http.allow_hosts');
    expect(hits).toEqual(['/hello', '/to-loopback-ip']);
  });

  it('connects to the address it checked, never resolving the name again (no DNS rebinding)', async () => {
    const answers = [[{ address: '127.0.0.1', family: 4 }], [{ address: '10.0.0.1', family: 4 }]];
    let lookups = 0;
    const rebinding: Resolver = async () => {
      const answer = answers[Math.min(lookups, answers.length - 1)] ?? [];
      lookups += 1;
      return answer;
    };
    const tools = toolbox({ private_hosts: ['rebind.test'] }, rebinding);
    const result = await callOk(tools, 'http_request', { url: `http://rebind.test:${port}/hello` });
    expect(result.body).toBe('hello');
    expect(lookups).toBe(1);
  });

  it('allow_private lets every host reach internal addresses', async () => {
    const result = await callOk(toolbox({ allow_private: true }), 'http_request', {
      url: `http://127.0.0.1:${port}/hello`,
    });
    expect(result.body).toBe('hello');
  });

  it('refuses other schemes and credentials in the URL', async () => {
    expect(await callError(toolbox(), 'http_request', { url: 'file:///etc/passwd' })).toContain(
      'only http and https URLs are allowed',
    );
    expect(await callError(toolbox(), 'http_request', { url: 'http://user:pw@example.com/' })).toContain(
      'credentials in the URL are not allowed',
    );
  });
});

describe('http: limits', () => {
  it('cuts the response body at max_response_bytes', async () => {
    const result = await callOk(toolbox({ ...trustLocalhost, max_response_bytes: 1000 }), 'http_request', {
      url: `http://localhost:${port}/big`,
    });
    expect(result.body).toBe('y'.repeat(1000));
    expect(result.truncated).toBe(true);
  });

  it('times out', async () => {
    const refusal = await callError(toolbox({ ...trustLocalhost, timeout_ms: 300 }), 'http_request', {
      url: `http://localhost:${port}/slow`,
    });
    expect(refusal).toContain('took longer than 300 ms (tools.http.timeout_ms)');
  });

  it('stops after max_redirects', async () => {
    const refusal = await callError(toolbox({ ...trustLocalhost, max_redirects: 3 }), 'http_request', {
      url: `http://localhost:${port}/loop`,
    });
    expect(refusal).toContain('too many redirects: more than 3 (tools.http.max_redirects)');
    expect(hits).toHaveLength(4);
  });

  it('refuses headers the tool sets itself', async () => {
    expect(
      await callError(toolbox(), 'http_request', {
        url: 'http://example.com/',
        headers: { Host: 'internal' },
      }),
    ).toContain('headers.Host: set by the tool');
  });

  it('an abort stops the request and propagates', async () => {
    const controller = new AbortController();
    const call = callTool(
      toolbox(trustLocalhost),
      'http_request',
      { url: `http://localhost:${port}/slow` },
      toolContext({ signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error('run cancelled')), 100);
    await expect(call).rejects.toThrow();
  });
});
