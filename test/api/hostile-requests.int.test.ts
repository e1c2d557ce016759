import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { maxBodyDepth } from '../../src/api/json-body-parser.js';
import { rawInitializeRequest } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';
import { rawRequest } from './raw-http.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** `{"key":{"key":…1…}}` with `levels` objects. */
function nestedObject(key: string, levels: number): string {
  const opening = `{"${key}":`.repeat(levels - 1);
  return `${opening}{"${key}":1}${'}'.repeat(levels - 1)}`;
}

function nestedArray(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

const mcpHeaders = { accept: 'application/json, text/event-stream' };

describe('deeply nested JSON bodies', () => {
  it('every route that takes JSON answers 400 naming the depth limit, before anything recursive runs', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const session = await api.request('POST', '/v1/sessions', { body: {} });
    const routes = [
      '/v1/sessions',
      '/v1/runs',
      `/v1/sessions/${session.body.id}/messages`,
      `/v1/sessions/${session.body.id}/respond`,
      `/v1/runs/run_${'0'.repeat(16)}_x/cancel`,
      '/mcp',
    ];
    const hostileBodies = {
      'objects 10,000 deep': nestedObject('input', 10_000),
      'arrays 100,000 deep': nestedArray(100_000),
      'metadata 5,000 deep': `{"input":"hi","metadata":${nestedObject('a', 5_000)}}`,
      'an MCP call 5,000 deep': JSON.stringify({
        ...rawInitializeRequest,
        params: { ...rawInitializeRequest.params, capabilities: { deep: 0 } },
      }).replace('{"deep":0}', nestedObject('deep', 5_000)),
    };
    for (const path of routes) {
      for (const [name, body] of Object.entries(hostileBodies)) {
        const response = await rawRequest(api.url, { method: 'POST', path, body, headers: mcpHeaders });
        expect({ path, name, status: response.status }).toEqual({ path, name, status: 400 });
        expect(response.json.error).toMatchObject({
          code: 'invalid_request',
          message: `invalid request: body: nested deeper than ${maxBodyDepth} levels (the limit)`,
          details: { max_depth: maxBodyDepth },
        });
      }
    }
  });

  it('a body exactly at the limit is accepted, stored and read back; one level more is refused', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    // {"metadata": …}: the body is level 1, metadata holds the other levels.
    const atLimit = `{"input":"hi","metadata":${nestedObject('a', maxBodyDepth - 1)}}`;
    const started = await rawRequest(api.url, { method: 'POST', path: '/v1/runs', body: atLimit });
    expect(started.status).toBe(202);
    const session = await rawRequest(api.url, {
      method: 'GET',
      path: `/v1/sessions/${started.json.session_id}`,
    });
    expect(session.status).toBe(200);
    expect(session.json.metadata).toEqual(JSON.parse(atLimit).metadata);
    const events = await rawRequest(api.url, {
      method: 'GET',
      path: `/v1/sessions/${started.json.session_id}/events?follow=false`,
      readStream: true,
    });
    expect(events.status).toBe(200);
    expect(events.body).toMatch(/event: run_completed/);

    const overLimit = `{"input":"hi","metadata":${nestedObject('a', maxBodyDepth)}}`;
    const refused = await rawRequest(api.url, { method: 'POST', path: '/v1/runs', body: overLimit });
    expect(refused.status).toBe(400);
  });

  it('brackets inside strings do not count, and JSON that does not parse is still a 400', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const text = `{"text":"${'[{'.repeat(10_000)}\\"${'}]'.repeat(10_000)}"}`;
    const session = await api.request('POST', '/v1/sessions', { body: {} });
    const sent = await rawRequest(api.url, {
      method: 'POST',
      path: `/v1/sessions/${session.body.id}/messages`,
      body: text,
    });
    expect(sent.status).toBe(202);
    const broken = await rawRequest(api.url, { method: 'POST', path: '/v1/runs', body: '{"input": ]]]]' });
    expect(broken.status).toBe(400);
    const poisoned = await rawRequest(api.url, {
      method: 'POST',
      path: '/v1/sessions',
      body: '{"metadata":{"__proto__":{"x":1}}}',
    });
    expect(poisoned.status).toBe(400);
  });
});

describe('event ids out of range', () => {
  const hostileIds = [
    '99999999999999999999999-0',
    '1-99999999999999999999',
    '18446744073709551616-0',
    '0-18446744073709551616',
    '-1',
    'abc',
    '1-2-3',
    '9'.repeat(5_000),
    `1-${'0'.repeat(200)}`,
  ];

  it('?after= and Last-Event-ID answer 400 naming the field and the form', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const session = await api.request('POST', '/v1/sessions', { body: {} });
    const path = `/v1/sessions/${session.body.id}/events`;
    for (const id of hostileIds) {
      for (const follow of ['true', 'false']) {
        const query = await rawRequest(api.url, {
          method: 'GET',
          path: `${path}?follow=${follow}&after=${encodeURIComponent(id)}`,
        });
        expect({ id, follow, status: query.status }).toEqual({ id, follow, status: 400 });
        expect(query.json.error.message).toMatch(
          /^invalid request: querystring\.after: must be an event id: <milliseconds>-<sequence>/,
        );
        const header = await rawRequest(api.url, {
          method: 'GET',
          path: `${path}?follow=${follow}`,
          headers: { 'last-event-id': id },
        });
        expect({ id, follow, status: header.status }).toEqual({ id, follow, status: 400 });
        expect(header.json.error.details.issues).toEqual([
          {
            location: 'headers',
            path: 'last-event-id',
            message: expect.stringMatching(/^must be an event id: /),
          },
        ]);
      }
    }
  });

  it('the largest ids and a bare milliseconds id are valid: nothing follows the largest', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    const started = await api.request('POST', '/v1/runs', { body: { input: 'hi' } });
    await api.request('GET', `/v1/runs/${started.body.run_id}/wait?timeout_s=20`);
    const path = `/v1/sessions/${started.body.session_id}/events?follow=false`;
    for (const id of [
      '18446744073709551615-18446744073709551615',
      '18446744073709551615',
      '18446744073709551615-0',
    ]) {
      const query = await rawRequest(api.url, { method: 'GET', path: `${path}&after=${id}` });
      expect({ id, status: query.status }).toEqual({ id, status: 204 });
      const header = await rawRequest(api.url, { method: 'GET', path, headers: { 'last-event-id': id } });
      expect({ id, status: header.status }).toEqual({ id, status: 204 });
    }
    const fromStart = await rawRequest(api.url, { method: 'GET', path: `${path}&after=0`, readStream: true });
    expect(fromStart.status).toBe(200);
    expect(fromStart.body).toMatch(/event: run_started/);
  });

  it('following after the largest id keeps the stream open (nothing can follow it), without an error', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    const session = await api.request('POST', '/v1/sessions', { body: {} });
    const path = `/v1/sessions/${session.body.id}/events?follow=true`;
    let stream: IncomingMessage | undefined;
    const answer = await rawRequest(
      api.url,
      { method: 'GET', path, headers: { 'last-event-id': '18446744073709551615-18446744073709551615' } },
      { keepStream: (response) => (stream = response) },
    );
    expect(answer.status).toBe(200);
    let ended = false;
    stream?.on('close', () => (ended = true));
    stream?.resume();
    await sleep(500);
    expect(ended).toBe(false);
    stream?.destroy();
  });
});
