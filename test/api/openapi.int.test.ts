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
      'DELETE /v1/sessions/{id}/queued/{message_id}',
      'GET /v1/sessions/{id}/questions',
      'GET /v1/sessions/{id}/approvals',
      'DELETE /v1/sessions/{id}/approvals/{key}',
      'GET /v1/questions',
      'POST /v1/sessions/{id}/respond',
      'GET /v1/sessions/{id}/state',
      'GET /v1/sessions/{id}/tasks',
      'GET /v1/sessions/{id}/notes',
      'GET /v1/sessions/{id}/events',
      'POST /v1/runs',
      'GET /v1/runs/{id}',
      'GET /v1/runs/{id}/wait',
      'POST /v1/runs/{id}/cancel',
      'POST /v1/runs/{id}/fork',
      'POST /v1/runs/{id}/retry',
      'POST /v1/runs/{id}/signal',
      'POST /v1/events',
      'POST /v1/runs/{id}/upgrade',
      'GET /v1/agents',
      'GET /v1/agents/{name}',
      'GET /v1/agents/{name}/memory',
      'GET /v1/runs/{id}/tree',
      'GET /v1/runs/{id}/steps',
      'GET /v1/runs/{id}/messages',
      'GET /v1/system',
      'GET /v1/runs',
      'GET /v1/runs/summary',
      'GET /v1/sessions',
      'GET /v1/webhooks/deliveries',
      'POST /v1/webhooks/deliveries/{id}/redeliver',
      'POST /v1/schedules',
      'GET /v1/schedules',
      'GET /v1/schedules/{id}',
      'DELETE /v1/schedules/{id}',
      'POST /v1/schedules/{id}/pause',
      'POST /v1/schedules/{id}/resume',
    ].sort(),
  );

  // Request bodies and responses come from the same schemas that validate them.
  const createRun = document.paths['/v1/runs'].post;
  const body = createRun.requestBody.content['application/json'].schema;
  expect(Object.keys(body.properties).sort()).toEqual([
    'agent',
    'budget',
    'idempotency_key',
    'input',
    'max_iterations',
    'metadata',
    'on_busy',
    'priority',
    'session_id',
    'tenant',
    'timeout_s',
  ]);
  expect(body.required).toEqual(['input']);
  expect(body.additionalProperties).toBe(false);
  expect(Object.keys(createRun.responses).sort()).toEqual([
    '200',
    '202',
    '400',
    '401',
    '403',
    '404',
    '409',
    '413',
    '422',
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
    'AgentDetail',
    'AgentMemory',
    'Error',
    'Event',
    'Inbox',
    'InboxQuestion',
    'IterationStep',
    'Message',
    'Question',
    'QueuedMessage',
    'QueuedReason',
    'RememberedApproval',
    'Run',
    'RunList',
    'RunListItem',
    'RunMessageList',
    'RunSteps',
    'RunSummary',
    'RunTree',
    'RunTreeNode',
    'SentEvent',
    'SentMessage',
    'SentSignal',
    'Session',
    'SessionList',
    'SessionListItem',
    'StepAttempt',
    'StepWait',
    'SystemState',
    'ToolCallStep',
    'TriggeredRun',
    'UsageTotals',
    'WebhookDelivery',
  ]);
  const steps = document.paths['/v1/runs/{id}/steps'].get;
  expect(steps.responses['200'].content['application/json'].schema.$ref).toBe(
    '#/components/schemas/RunSteps',
  );
  expect(steps.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual([
    'cut_at',
    'from',
    'id',
    'limit',
  ]);
  expect(document.components.schemas.Error.properties.error.properties.code.enum).toContain(
    'payload_too_large',
  );

  const docs = await fetch(`${api.url}/docs`);
  expect(docs.status).toBe(200);
  expect(docs.headers.get('content-type')).toMatch(/text\/html/);
});

it('with api.tokens every operation that needs the token says bearerAuth, the health checks say none, and the server agrees', async () => {
  const token = 'openapi-token-0123456789';
  api = await ApiHarness.start({
    script: { default: { text: 'ok' } },
    worker: false,
    api: { tokens: [token] },
  });
  const harness = api;
  const document = (
    await harness.request('GET', '/openapi.json', { headers: { authorization: `Bearer ${token}` } })
  ).body;
  expect(document.components.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer' } });
  expect(document.security).toBeUndefined();
  const operations = Object.entries(
    document.paths as Record<string, Record<string, { security?: unknown; requestBody?: unknown }>>,
  ).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
  expect(operations.length).toBeGreaterThan(10);
  for (const { path, method, operation } of operations) {
    const open = path === '/healthz' || path === '/readyz';
    expect({ path, method, security: operation.security }).toEqual({
      path,
      method,
      security: open ? [] : [{ bearerAuth: [] }],
    });
    // What the document says is what the server does: without the token, 401 exactly where it asks for one.
    const answer = await harness.request(method.toUpperCase(), path.replace('{id}', 'ses_0000000000000000'));
    if (open) expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    else expect({ path, method, status: answer.status }).toEqual({ path, method, status: 401 });
  }
});

it('a body that may be left out is not required: cancel and session create; a run submission needs one', async () => {
  api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
  const document = (await api.request('GET', '/openapi.json')).body;
  expect(document.paths['/v1/runs/{id}/cancel'].post.requestBody.required).toBe(false);
  expect(document.paths['/v1/sessions'].post.requestBody.required).toBe(false);
  expect(document.paths['/v1/runs'].post.requestBody.required).toBe(true);
  expect(document.paths['/v1/sessions/{id}/messages'].post.requestBody.required).toBe(true);
  // Without api.tokens nothing needs a token, and the document declares no scheme nor applies one.
  expect(document.components.securitySchemes).toBeUndefined();
  expect(JSON.stringify(document)).not.toContain('bearerAuth');
  // And the server takes the cancel without a body.
  const submitted = await api.request('POST', '/v1/runs', { body: { input: 'hi' } });
  const cancelled = await api.request('POST', `/v1/runs/${submitted.body.run_id}/cancel`);
  expect(cancelled.status).toBe(202);
});
