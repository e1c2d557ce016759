import { afterEach, expect, it } from 'vitest';
import { ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('/openapi.json documents every route from the zod schemas, and /docs serves Swagger UI', async () => {
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
  const response = await api.request('GET', '/openapi.json');
  expect(response.status).toBe(200);
  const document = response.body;
  expect(document.openapi).toBe('3.1.0');

  const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
    ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(operations.sort()).toEqual(
    [
      'GET /healthz',
      'GET /readyz',
      'POST /v1/sessions',
      'GET /v1/sessions/{id}',
      'DELETE /v1/sessions/{id}',
      'GET /v1/sessions/{id}/messages',
      'POST /v1/sessions/{id}/messages',
      'GET /v1/sessions/{id}/questions',
      'POST /v1/sessions/{id}/respond',
      'GET /v1/sessions/{id}/state',
      'GET /v1/sessions/{id}/tasks',
      'GET /v1/sessions/{id}/notes',
      'GET /v1/sessions/{id}/events',
      'POST /v1/runs',
      'GET /v1/runs/{id}',
      'GET /v1/runs/{id}/wait',
      'POST /v1/runs/{id}/cancel',
      'GET /v1/agents',
    ].sort(),
  );

  // Request bodies and responses come from the same schemas that validate them.
  const createRun = document.paths['/v1/runs'].post;
  const body = createRun.requestBody.content['application/json'].schema;
  expect(Object.keys(body.properties).sort()).toEqual([
    'agent',
    'budget',
    'input',
    'max_iterations',
    'metadata',
    'session_id',
    'timeout_s',
  ]);
  expect(body.required).toEqual(['input']);
  expect(body.additionalProperties).toBe(false);
  expect(Object.keys(createRun.responses).sort()).toEqual([
    '202',
    '400',
    '401',
    '403',
    '404',
    '409',
    '413',
    '503',
  ]);
  expect(createRun.responses['409'].content['application/json'].schema.$ref).toBe(
    '#/components/schemas/Error',
  );

  const events = document.paths['/v1/sessions/{id}/events'].get;
  expect(events.responses['200'].content['text/event-stream'].schema.$ref).toBe('#/components/schemas/Event');
  expect(events.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual([
    'after',
    'follow',
    'id',
  ]);

  const schemas = Object.keys(document.components.schemas).sort();
  expect(schemas).toEqual([
    'AcceptedRun',
    'Error',
    'Event',
    'Message',
    'Question',
    'Run',
    'Session',
    'UsageTotals',
  ]);
  expect(document.components.schemas.Error.properties.error.properties.code.enum).toContain(
    'payload_too_large',
  );

  const docs = await fetch(`${api.url}/docs`);
  expect(docs.status).toBe(200);
  expect(docs.headers.get('content-type')).toMatch(/text\/html/);
});
