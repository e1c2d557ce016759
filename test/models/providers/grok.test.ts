import { describe, expect, it } from 'vitest';
import { expectSentTo, type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { describeProviderConformance } from './provider-conformance.js';
import {
  parallelAddCallParts,
  QUESTION,
  requestOf,
  responses,
  toolRoundChat,
  userMessage,
} from './provider-fixtures.js';

// @ai-sdk/xai 5 speaks only xAI's Responses API (POST /v1/responses), OpenAI's Responses shape with xAI's
// own fields. Shapes from https://docs.x.ai/docs/api-reference (create a response, streaming).
const MODEL = 'grok-4';

function response(output: unknown[], usage: Record<string, unknown>, status = 'completed'): unknown {
  return {
    id: 'a6a4b8d4-2f1e-4b59-8a55-0e2ad4c3a1b2',
    object: 'response',
    created_at: 1752000000,
    model: 'grok-4-0709',
    output,
    status,
    usage,
  };
}

const messageItem = (text: string) => responses.messageItem('msg_a6a4b8d4', text);
const functionCallItem = (callId: string, args: string) =>
  responses.functionCallItem(`fc_${callId}`, callId, args);
const usage = responses.usage;

const textReply = (text: string): FakeReply => ({ json: response([messageItem(text)], usage(9, 0, 2)) });

describeProviderConformance({
  kind: 'grok',
  model: MODEL,
  basePath: '/v1',
  // xAI's Responses errors: {"code": "<gRPC-style status>", "error": "<message>"}.
  errorBody: (status, message) => ({
    code: status === 429 ? 'Too many requests' : status === 401 ? 'Unauthenticated' : 'Internal error',
    error: message,
  }),
  textReply,
  unfinishedStream: responses.sse([
    {
      type: 'response.created',
      response: {
        id: 'r',
        object: 'response',
        created_at: 1752000000,
        model: MODEL,
        output: [],
        status: 'in_progress',
      },
    },
    responses.messageAdded('msg_c'),
    ...['Hel', 'lo'].map((delta) => responses.textDelta('msg_c', delta)),
  ]),
  streamedReply: (deltas) => {
    const created = {
      id: 'r',
      object: 'response',
      created_at: 1752000000,
      model: MODEL,
      output: [],
      status: 'in_progress',
    };
    return {
      sse: responses.sse([
        { type: 'response.created', response: created },
        responses.messageAdded('msg_w'),
        ...deltas.map((delta) => responses.textDelta('msg_w', delta)),
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: { ...messageItem(deltas.join('')), id: 'msg_w' },
        },
        {
          type: 'response.completed',
          response: { ...created, status: 'completed', usage: usage(9, 0, deltas.length) },
        },
      ]),
    };
  },
});

describe('grok: the xAI Responses API wire format', () => {
  const fake = useFakeProvider('grok', MODEL, (origin) => ({
    api_key: 'xai-test',
    base_url: `${origin}/v1`,
    max_tokens: 300,
  }));

  it('sends the system message, images, function calls and function_call_outputs', async () => {
    const { sent } = await fake.send(textReply('Done.'), requestOf(toolRoundChat()));
    expectSentTo(sent, '/v1/responses', { authorization: 'Bearer xai-test' });
    const body = sent.body;
    expect(body.model).toBe(MODEL);
    expect(body.max_output_tokens).toBe(300);
    expect(body.input).toEqual([
      ...responses.toolRoundInputStart(),
      {
        type: 'function_call',
        id: 'call_1',
        call_id: 'call_1',
        name: 'add',
        arguments: '{"a":2,"b":3}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: 'call_2',
        call_id: 'call_2',
        name: 'add',
        arguments: '{"a":4,"b":5}',
        status: 'completed',
      },
      { type: 'function_call_output', call_id: 'call_1', output: '5' },
      { type: 'function_call_output', call_id: 'call_2', output: 'overflow' },
    ]);
    expect(body.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'add',
        description: 'Adds two numbers.',
        parameters: expect.objectContaining({ required: ['a', 'b'] }),
      }),
    ]);
    expect(body.tool_choice).toBe('auto');
  });

  it('reads text, parallel function calls, usage with cached tokens and x-ratelimit headers', async () => {
    const { completion } = await fake.send(
      {
        json: response(
          [
            messageItem('Adding both.'),
            functionCallItem('call_x1', '{"a":2,"b":3}'),
            functionCallItem('call_x2', '{"a":4,"b":5}'),
          ],
          usage(700, 512, 45),
        ),
        headers: { 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-remaining-tokens': '15000' },
      },
      requestOf([userMessage(QUESTION)]),
    );
    expect(completion).toEqual({
      parts: parallelAddCallParts('call_x1', 'call_x2'),
      usage: { input_tokens: 700, output_tokens: 45, cached_input_tokens: 512, requests: 1 },
      rateLimit: { remainingRequests: 59, remainingTokens: 15000 },
    });
  });

  it('streams text deltas and returns the same completion', async () => {
    const base = {
      id: 'resp_s',
      object: 'response',
      created_at: 1752000000,
      model: 'grok-4-0709',
      output: [],
      status: 'in_progress',
    };
    const sse = responses.sse([
      { type: 'response.created', response: base },
      responses.messageAdded('msg_s'),
      {
        type: 'response.content_part.added',
        item_id: 'msg_s',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '' },
      },
      responses.textDelta('msg_s', 'Two '),
      responses.textDelta('msg_s', 'sums.'),
      {
        type: 'response.output_text.done',
        item_id: 'msg_s',
        output_index: 0,
        content_index: 0,
        text: 'Two sums.',
      },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { ...messageItem('Two sums.'), id: 'msg_s' },
      },
      { type: 'response.output_item.added', output_index: 1, item: functionCallItem('call_s', '') },
      {
        type: 'response.function_call_arguments.delta',
        item_id: 'fc_call_s',
        output_index: 1,
        delta: '{"a":2,"b":3}',
      },
      {
        type: 'response.function_call_arguments.done',
        item_id: 'fc_call_s',
        output_index: 1,
        arguments: '{"a":2,"b":3}',
      },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: functionCallItem('call_s', '{"a":2,"b":3}'),
      },
      {
        type: 'response.completed',
        response: { ...base, status: 'completed', output: [], usage: usage(80, 64, 12) },
      },
    ]);
    const { completion, deltas, sent } = await fake.stream({ sse }, [userMessage(QUESTION)]);
    expect(sent.body.stream).toBe(true);
    expect(deltas).toEqual(['Two ', 'sums.']);
    expect(completion).toEqual({
      parts: [
        { type: 'text', text: 'Two sums.' },
        { type: 'tool_call', id: 'call_s', name: 'add', arguments: '{"a":2,"b":3}' },
      ],
      usage: { input_tokens: 80, output_tokens: 12, cached_input_tokens: 64, requests: 1 },
    });
  });
});
