import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from './api-harness.js';
import { rawRequest, rawSocketRequest } from './raw-http.js';

// Every error the server answers, Fastify's and Node's own refusals included, is {error: {code, message,
// details}}, with details.issues naming the part of the request at fault.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(): Promise<ApiHarness> {
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
  return api;
}

function requestText(harness: ApiHarness, lines: string[], body = ''): string {
  const host = new URL(harness.url).host;
  return [...lines.slice(0, 1), `Host: ${host}`, 'Connection: close', ...lines.slice(1), '', body].join(
    '\r\n',
  );
}

function issueError(code: string, location: string, path: string, message: string, extra = {}) {
  return {
    error: {
      code,
      message: `invalid request: ${path === '' ? location : `${location}.${path}`}: ${message}`,
      details: { issues: [{ location, path, message }], ...extra },
    },
  };
}

describe('the error envelope', () => {
  it('a malformed percent-encoding in the path is 400 invalid_request naming the path', async () => {
    const harness = await start();
    for (const path of ['/v1/runs/%zz', '/v1/sessions/%E0%A4%A/events']) {
      const answer = await rawSocketRequest(harness.url, requestText(harness, [`GET ${path} HTTP/1.1`]));
      expect(answer.status, path).toBe(400);
      expect(answer.json).toEqual(
        issueError(
          'invalid_request',
          'path',
          '',
          'malformed percent-encoding (a "%" must be followed by two hex digits of valid UTF-8)',
        ),
      );
    }
  });

  it('an id over its 200 characters is 400 naming params.id; a segment over 1000 is 414; a request line over 16 KiB is 431', async () => {
    const harness = await start();
    const long = await rawRequest(harness.url, { method: 'GET', path: `/v1/runs/${'a'.repeat(300)}` });
    expect(long.status).toBe(400);
    expect(long.json).toEqual(
      issueError('invalid_request', 'params', 'id', 'Too big: expected string to have <=200 characters'),
    );
    const longer = await rawRequest(harness.url, {
      method: 'GET',
      path: `/v1/sessions/${'a'.repeat(1500)}/chat`,
    });
    expect(longer.status).toBe(414);
    expect(longer.json).toEqual(
      issueError('uri_too_long', 'path', '', 'a path segment is longer than 1000 characters', {
        limit: 1000,
      }),
    );
    const huge = await rawSocketRequest(
      harness.url,
      requestText(harness, [`GET /v1/runs/${'a'.repeat(20_000)} HTTP/1.1`]),
    );
    expect(huge.status).toBe(431);
    expect(huge.json).toEqual({
      error: {
        code: 'headers_too_large',
        message: 'the request line and headers are larger than 16384 bytes (a path or header too long)',
        details: { limit_bytes: 16384 },
      },
    });
  });

  it('bytes that are not HTTP get 400 in the envelope too', async () => {
    const harness = await start();
    const answer = await rawSocketRequest(harness.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      error: { code: 'invalid_request', message: 'the request is not valid HTTP', details: {} },
    });
  });

  it('an empty body sent as application/json is no body: taken where the body is optional, named where it is not', async () => {
    const harness = await start();
    const empty = { 'content-type': 'application/json', 'content-length': '0' };
    const session = await rawRequest(harness.url, { method: 'POST', path: '/v1/sessions', headers: empty });
    expect(session.status).toBe(201);
    const submitted = await harness.request('POST', '/v1/runs', { body: { input: 'hi' } });
    const cancelled = await rawRequest(harness.url, {
      method: 'POST',
      path: `/v1/runs/${submitted.body.run_id}/cancel`,
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '0' },
    });
    expect(cancelled.status).toBe(202);
    expect(cancelled.json.status).toBe('cancelled');
    const needed = await rawRequest(harness.url, { method: 'POST', path: '/v1/runs', headers: empty });
    expect(needed.status).toBe(400);
    expect(needed.json).toEqual(
      issueError('invalid_request', 'body', '', 'Invalid input: expected object, received null'),
    );
  });

  it('a body that is not JSON is 415 naming content-type; JSON that does not parse is 400 naming the body', async () => {
    const harness = await start();
    const text = await rawRequest(harness.url, {
      method: 'POST',
      path: '/v1/sessions',
      body: 'hi',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.json).toEqual(
      issueError(
        'unsupported_media_type',
        'headers',
        'content-type',
        'POST needs content-type: application/json, with a JSON body or none (a guard against requests from other sites)',
      ),
    );
    const broken = await rawRequest(harness.url, { method: 'POST', path: '/v1/sessions', body: '{' });
    expect(broken.status).toBe(400);
    expect(broken.json).toEqual(
      issueError(
        'invalid_request',
        'body',
        '',
        "Body is not valid JSON but content-type is set to 'application/json'",
      ),
    );
  });
});
