import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

/** A /v1/chat/completions server: each request is answered by the next handler. */
async function chatServer(
  handlers: ((request: IncomingMessage, response: ServerResponse, body: unknown) => void)[],
) {
  const bodies: unknown[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      const body = JSON.parse(text || '{}');
      bodies.push(body);
      const handler = handlers.shift();
      if (!handler) {
        response.writeHead(500).end('{"error":{"message":"no reply queued"}}');
        return;
      }
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function completion(message: Record<string, unknown>, finishReason: string) {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1741570283,
    model: 'local-model',
    choices: [
      { index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  });
}

const json = (response: ServerResponse, body: string) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(body);

let api: ApiHarness | undefined;
let model: Awaited<ReturnType<typeof chatServer>> | undefined;
afterEach(async () => {
  await api?.close();
  await model?.close();
  api = undefined;
  model = undefined;
});

function providerEntry(baseUrl: string) {
  return { name: 'model', kind: 'openai_compatible', model: 'local-model', base_url: baseUrl };
}

it('a run submitted through the API with an openai_compatible provider completes with tool calls', async () => {
  model = await chatServer([
    (_request, response) =>
      json(
        response,
        completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
              { id: 'call_b', type: 'function', function: { name: 'add', arguments: '{"a":4,"b":5}' } },
            ],
          },
          'tool_calls',
        ),
      ),
    (_request, response) => json(response, completion({ content: '5 and 9.' }, 'stop')),
  ]);
  api = await ApiHarness.start({
    script: { replies: [] },
    harness: { providerEntry: providerEntry(model.baseUrl) },
  });
  const submitted = await api.request('POST', '/v1/runs', { body: { input: 'What are 2+3 and 4+5?' } });
  expect(submitted.status).toBe(202);
  const run = await api.request('GET', `/v1/runs/${submitted.body.run_id}/wait?timeout_s=20`);
  expect(run.body).toMatchObject({ status: 'completed', result: '5 and 9.', iterations: 2 });
  expect(run.body.usage).toMatchObject({ input_tokens: 40, output_tokens: 10, requests: 2 });
  // The second request carried both tool results, as tool-role messages after the assistant's calls.
  const second = model.bodies[1] as {
    messages: { role: string; tool_call_id?: string; content?: unknown }[];
  };
  const tools = second.messages.filter((message) => message.role === 'tool');
  expect(tools.map((message) => [message.tool_call_id, message.content])).toEqual([
    ['call_a', '{"sum":5}'],
    ['call_b', '{"sum":9}'],
  ]);
  expect(second.messages[0]).toMatchObject({ role: 'system' });
});

it('cancel during a slow model reply aborts the request the model server is answering', async () => {
  let aborted = false;
  let requested = false;
  model = await chatServer([
    (_request, response) => {
      requested = true;
      response.on('close', () => {
        if (!response.writableEnded) aborted = true;
      });
      // Never answers: the reply would take minutes.
    },
  ]);
  api = await ApiHarness.start({
    script: { replies: [] },
    harness: { providerEntry: providerEntry(model.baseUrl) },
  });
  const submitted = await api.request('POST', '/v1/runs', { body: { input: 'take your time' } });
  await waitFor(() => requested, 20_000, 'the model request');
  const cancelled = await api.request('POST', `/v1/runs/${submitted.body.run_id}/cancel`);
  expect(cancelled.status).toBe(202);
  await waitFor(() => aborted, 10_000, 'the model server to see the request aborted');
  const run = await api.request('GET', `/v1/runs/${submitted.body.run_id}`);
  expect(run.body.status).toBe('cancelled');
});
