import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { toApiError } from '../../src/api/api-error.js';
import { type HostGuardOptions, hostGuard } from '../../src/api/host-guard.js';
import { nestsDeeperThan } from '../../src/api/json-body-parser.js';
import { allowedHostNames, hostNameOf, originOf } from '../../src/http/index.js';
import { isStreamId } from '../../src/wire/stream-id.js';

describe('nestsDeeperThan', () => {
  it('counts objects and arrays inside one another, without recursion', () => {
    expect(nestsDeeperThan('{}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":[]}', 1)).toBe(true);
    expect(nestsDeeperThan('{"a":[]}', 2)).toBe(false);
    expect(nestsDeeperThan('[[],[],{"a":{}}]', 2)).toBe(true);
    expect(nestsDeeperThan('[[],[],[]]', 2)).toBe(false);
    expect(nestsDeeperThan('['.repeat(1_000_000), 64)).toBe(true);
    expect(nestsDeeperThan('[]'.repeat(1_000_000), 1)).toBe(false);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(`{"a":"${'[{'.repeat(100)}"}`, 1)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\"${'['.repeat(100)}\\\\"}`, 1)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\\\","b":[[]]}', 2)).toBe(true);
  });
});

describe('isStreamId', () => {
  it('accepts <ms>-<seq> and <ms> with each part in 0..2^64-1', () => {
    for (const id of ['0', '0-0', '1718000000000-0', '18446744073709551615-18446744073709551615', '007-01']) {
      expect({ id, valid: isStreamId(id) }).toEqual({ id, valid: true });
    }
  });

  it('refuses what Redis would refuse', () => {
    for (const id of [
      '',
      '-1',
      '1-',
      '-',
      '+',
      'abc',
      '1-2-3',
      ' 1-0',
      '1.5-0',
      '18446744073709551616',
      '1-18446744073709551616',
      '99999999999999999999999-0',
      `0${'0'.repeat(20)}-0`,
      '9'.repeat(5_000),
    ]) {
      expect({ id, valid: isStreamId(id) }).toEqual({ id, valid: false });
    }
  });
});

describe('hostNameOf', () => {
  it('takes the host of a Host header, normalized', () => {
    expect(hostNameOf('LocalHost.:8080')).toBe('localhost');
    expect(hostNameOf('[::1]:8080')).toBe('[::1]');
    expect(hostNameOf('10.0.0.5')).toBe('10.0.0.5');
    expect(hostNameOf('evil.example/path')).toBeUndefined();
    expect(hostNameOf('user@localhost')).toBeUndefined();
    expect(hostNameOf('::1')).toBeUndefined();
  });

  it('is one host: a list, inner spaces or characters no host name has are not', () => {
    expect(hostNameOf('localhost,evil.example')).toBeUndefined();
    expect(hostNameOf('localhost, evil.example')).toBeUndefined();
    expect(hostNameOf('localhost evil.example')).toBeUndefined();
    expect(hostNameOf('localhost;evil.example')).toBeUndefined();
    expect(hostNameOf('local%68ost')).toBeUndefined();
    expect(hostNameOf('my_host-1.internal:80')).toBe('my_host-1.internal');
  });
});

describe('allowedHostNames', () => {
  it('loopback names, the configured names and the bound address (not a wildcard)', () => {
    expect([...allowedHostNames({ bindHost: '127.0.0.1', allowedHosts: [] })].sort()).toEqual([
      '127.0.0.1',
      '[::1]',
      'localhost',
    ]);
    expect(allowedHostNames({ bindHost: '10.0.0.5', allowedHosts: ['Ratchet.Internal.', '::1'] })).toEqual(
      new Set(['localhost', '127.0.0.1', '[::1]', 'ratchet.internal', '10.0.0.5']),
    );
    expect(allowedHostNames({ bindHost: '::', allowedHosts: [] }).has('[::]')).toBe(false);
    expect(allowedHostNames({ bindHost: '0.0.0.0', allowedHosts: [] }).has('0.0.0.0')).toBe(false);
  });
});

/** A server with only the guard and one route, answered in memory (no socket). */
async function statusOf(options: HostGuardOptions, headers: Record<string, string>): Promise<number> {
  const app = Fastify();
  app.setErrorHandler((error, _request, reply) => {
    const mapped = toApiError(error);
    return reply.status(mapped.status).send({ error: { code: mapped.code, message: mapped.message } });
  });
  app.addHook('onRequest', hostGuard(options));
  app.get('/v1/agents', async () => ({ agents: [] }));
  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok' }));
  try {
    const response = await app.inject({ method: 'GET', url: headers.path ?? '/v1/agents', headers });
    return response.statusCode;
  } finally {
    await app.close();
  }
}

describe('hostGuard: Origin', () => {
  const loopback = { bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [], authenticated: false };

  it("takes only the request's own origin (host and port of Host, http or https), never another port", async () => {
    const own = { host: 'localhost:8080' };
    expect(await statusOf(loopback, { ...own, origin: 'http://localhost:8080' })).toBe(200);
    expect(await statusOf(loopback, { ...own, origin: 'https://localhost:8080' })).toBe(200);
    expect(await statusOf(loopback, { ...own, origin: 'http://LOCALHOST.:8080' })).toBe(200);
    expect(await statusOf(loopback, { host: 'localhost', origin: 'http://localhost' })).toBe(200);
    expect(await statusOf(loopback, { host: 'localhost:80', origin: 'http://localhost' })).toBe(200);
    expect(await statusOf(loopback, { host: 'localhost', origin: 'https://localhost' })).toBe(200);
    for (const origin of [
      'http://localhost:3000',
      'http://127.0.0.1:8080',
      'http://localhost',
      'http://[::1]:8080',
      'null',
      'file://',
      'chrome-extension://abcdef',
      'ws://localhost:8080',
      'http://localhost:8080.evil.example',
    ]) {
      expect({ origin, status: await statusOf(loopback, { ...own, origin }) }).toEqual({
        origin,
        status: 403,
      });
    }
    expect(await statusOf(loopback, { host: 'localhost', origin: 'http://localhost:8080' })).toBe(403);
  });

  it('takes the origins of allowed_origins, exactly (scheme, host and port)', async () => {
    const options = { ...loopback, allowedOrigins: ['https://UI.example', 'http://localhost:6274/'] };
    const own = { host: '127.0.0.1:8080' };
    expect(await statusOf(options, { ...own, origin: 'https://ui.example' })).toBe(200);
    expect(await statusOf(options, { ...own, origin: 'https://ui.example:443' })).toBe(200);
    expect(await statusOf(options, { ...own, origin: 'http://localhost:6274' })).toBe(200);
    expect(await statusOf(options, { ...own, origin: 'http://ui.example' })).toBe(403);
    expect(await statusOf(options, { ...own, origin: 'https://ui.example:8443' })).toBe(403);
    expect(await statusOf(options, { ...own, origin: 'http://localhost:6275' })).toBe(403);
  });
});

describe('originOf', () => {
  it('takes scheme://host[:port] of http and https, as browsers send it, and nothing else', () => {
    expect(originOf('https://UI.Example')).toBe('https://ui.example');
    expect(originOf('https://ui.example/')).toBe('https://ui.example');
    expect(originOf('http://localhost:80')).toBe('http://localhost');
    expect(originOf('http://[::1]:3000')).toBe('http://[::1]:3000');
    for (const text of [
      'ui.example',
      'https://ui.example/path',
      'https://ui.example?x=1',
      'https://user@ui.example',
      'ftp://ui.example',
      'null',
      ' https://ui.example',
      'https://*.example',
    ]) {
      expect({ text, origin: originOf(text) }).toEqual({ text, origin: undefined });
    }
  });
});

describe('hostGuard', () => {
  const open = { allowedHosts: [], allowedOrigins: [], authenticated: false };

  it('bound to loopback: only loopback names and the configured ones', async () => {
    const options = { ...open, bindHost: '127.0.0.1' };
    expect(await statusOf(options, { host: 'localhost:8080' })).toBe(200);
    expect(await statusOf(options, { host: '10.0.0.5:8080' })).toBe(403);
    expect(await statusOf(options, { host: 'evil.example:8080' })).toBe(403);
    expect(
      await statusOf({ ...options, allowedHosts: ['ratchet.internal'] }, { host: 'ratchet.internal' }),
    ).toBe(200);
  });

  it('bound to a non-loopback address: also any IP address as Host, never a foreign name', async () => {
    for (const bindHost of ['0.0.0.0', '::', '10.0.0.5']) {
      const options = { ...open, bindHost };
      expect(await statusOf(options, { host: '10.0.0.5:8080' })).toBe(200);
      expect(await statusOf(options, { host: '[fd00::5]:8080' })).toBe(200);
      expect(await statusOf(options, { host: 'localhost:8080' })).toBe(200);
      expect(await statusOf(options, { host: 'evil.example:8080' })).toBe(403);
      // The API's own page (/docs) reached by address: same origin.
      expect(await statusOf(options, { host: '10.0.0.5:8080', origin: 'http://10.0.0.5:8080' })).toBe(200);
      // Another page on the network driving this server: a foreign origin.
      expect(await statusOf(options, { host: '10.0.0.5:8080', origin: 'http://10.0.0.9' })).toBe(403);
    }
    expect(await statusOf({ ...open, bindHost: 'ratchet.internal' }, { host: 'ratchet.internal:80' })).toBe(
      200,
    );
  });

  it('with tokens: off unless allowed_hosts is set; public routes are never checked', async () => {
    const hostile = { host: 'evil.example', origin: 'http://evil.example' };
    const withTokens = { ...open, bindHost: '127.0.0.1', authenticated: true };
    expect(await statusOf(withTokens, hostile)).toBe(200);
    expect(await statusOf({ ...withTokens, allowedHosts: ['ratchet.internal'] }, hostile)).toBe(403);
    // allowed_origins alone turns the Origin check on, not the Host check.
    const originsOnly = { ...withTokens, allowedOrigins: ['https://ui.example'] };
    expect(await statusOf(originsOnly, { host: 'evil.example' })).toBe(200);
    expect(await statusOf(originsOnly, { host: 'evil.example', origin: 'http://other.example' })).toBe(403);
    expect(await statusOf(originsOnly, { host: 'evil.example', origin: 'https://ui.example' })).toBe(200);
    expect(await statusOf({ ...open, bindHost: '127.0.0.1' }, { ...hostile, path: '/healthz' })).toBe(200);
  });
});
