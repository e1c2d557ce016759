import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { consoleHeaders, consoleRoutes } from '../../src/api/console-routes.js';
import { ApiHarness, type ApiHarnessOptions } from './api-harness.js';
import { rawRequest, rawSocketRequest } from './raw-http.js';

// The console's files as the API serves them, over plain HTTP (the browser tests in test/console drive the
// page itself). They are the build's output: `npm run build` (which `npm install` runs) writes them.

const built = resolve(import.meta.dirname, '../../dist/console');

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(options: Partial<ApiHarnessOptions> = {}): Promise<ApiHarness> {
  if (!existsSync(join(built, 'index.html'))) {
    throw new Error(`${built} has no index.html: run npm run build (npm install runs it) before the tests`);
  }
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false, ...options });
  return api;
}

function expectConsoleHeaders(headers: Record<string, unknown>) {
  expect(headers['content-security-policy']).toBe(consoleHeaders['content-security-policy']);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe('the console at /console', () => {
  it('answers its page with the strict CSP, and its script and style with their types', async () => {
    const harness = await start();
    for (const path of ['/console', '/console/']) {
      const page = await rawRequest(harness.url, { method: 'GET', path });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expectConsoleHeaders(page.headers);
      expect(page.body).toContain('<script type="module" src="/console/assets/app.js"></script>');
      expect(page.body).toContain('<link rel="stylesheet" href="/console/assets/app.css">');
      // Nothing inline (the CSP would refuse it) and nothing from elsewhere.
      expect(page.body).not.toMatch(/<script>|<style|style="|https?:\/\//);
    }
    const csp = String(consoleHeaders['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');

    const script = await rawRequest(harness.url, { method: 'GET', path: '/console/assets/app.js' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expectConsoleHeaders(script.headers);
    expect(script.body).toBe(readFileSync(join(built, 'app.js'), 'utf8'));
    expect(script.body.length).toBeGreaterThan(1000);

    const style = await rawRequest(harness.url, { method: 'GET', path: '/console/assets/app.css' });
    expect(style.status).toBe(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expectConsoleHeaders(style.headers);
  });

  it('serves its three files and nothing else: other names, dot segments and encoded slashes are refused', async () => {
    const harness = await start();
    const { host } = new URL(harness.url);
    const attempts = [
      '/console/../package.json',
      '/console/assets/../../package.json',
      '/console/assets/..%2f..%2fpackage.json',
      '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/assets/%2e%2e/%2e%2e/package.json',
      '/console/assets/..%5c..%5cpackage.json',
      '/console/assets/index.html',
      '/console/assets/app.js.map',
      '/console/assets/',
      '/console/assets/%2fetc%2fpasswd',
      '/console/package.json',
      '/console/assets/app.js%00.png',
    ];
    for (const path of attempts) {
      // Written on the socket as is: an HTTP client would resolve the dot segments before sending.
      const answer = await rawSocketRequest(
        harness.url,
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect({ path, status: answer.status }).toEqual({ path, status: expect.toBeOneOf([400, 404]) });
      expect(answer.body).not.toContain('"name": "ratchet"');
      expect(answer.body).not.toContain('root:');
    }
  });

  it('needs no token for its files, while the API it calls does', async () => {
    const token = 'console-token-0123456789';
    const harness = await start({ api: { tokens: [token] } });
    for (const path of ['/console', '/console/assets/app.js', '/console/assets/app.css']) {
      expect((await rawRequest(harness.url, { method: 'GET', path })).status).toBe(200);
    }
    expect((await rawRequest(harness.url, { method: 'GET', path: '/v1/runs' })).status).toBe(401);
    const withToken = await rawRequest(harness.url, {
      method: 'GET',
      path: '/v1/runs',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(withToken.status).toBe(200);
  });

  it('is behind the host guard: a foreign Host or Origin is refused', async () => {
    const harness = await start();
    const port = new URL(harness.url).port;
    for (const path of ['/console', '/console/assets/app.js']) {
      const hostile: Record<string, string>[] = [
        { host: `evil.example:${port}` },
        { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      ];
      for (const headers of hostile) {
        const answer = await rawRequest(harness.url, { method: 'GET', path, headers });
        expect({ path, headers, status: answer.status }).toEqual({ path, headers, status: 403 });
        expect(answer.json.error.code).toBe('forbidden');
      }
    }
    // With tokens and api.allowed_hosts set, the guard applies to the token-free files too.
    await api?.close();
    const guarded = await start({
      api: { tokens: ['t-0123456789abcdef'], allowed_hosts: ['console.example'] },
    });
    const foreign = await rawRequest(guarded.url, {
      method: 'GET',
      path: '/console',
      headers: { host: `evil.example:${new URL(guarded.url).port}` },
    });
    expect(foreign.status).toBe(403);
    const allowed = await rawRequest(guarded.url, {
      method: 'GET',
      path: '/console',
      headers: { host: `console.example:${new URL(guarded.url).port}` },
    });
    expect(allowed.status).toBe(200);
  });

  it('answers 503 naming npm run build when the console is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ratchet-console-'));
    const app = Fastify();
    try {
      await app.register(consoleRoutes, { directory: empty });
      for (const url of ['/console', '/console/assets/app.js']) {
        const answer = await app.inject({ method: 'GET', url });
        expect(answer.statusCode).toBe(503);
        expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(answer.body).toContain('npm run build');
        expect(answer.headers['content-security-policy']).toBe(consoleHeaders['content-security-policy']);
      }
    } finally {
      await app.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
