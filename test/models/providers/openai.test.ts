import { describe, expect, it } from 'vitest';
import { expectSentTo, type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { describeProviderConformance } from './provider-conformance.js';
import {
  addTool,
  parallelAddCallParts,
  QUESTION,
  requestOf,
  responses,
  toolRoundChat,
  userMessage,
} from './provider-fixtures.js';

const answerFormat = {
  type: 'json' as const,
  schema: { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } },
  name: 'answer',
};

// The openai kind speaks the Responses API (POST /v1/responses), the @ai-sdk/openai default. Shapes from
// https://platform.openai.com/docs/api-reference/responses and .../responses-streaming.
const MODEL = 'gpt-4.1';

function response(output: unknown[], usage: Record<string, unknown>): unknown {
  return {
    id: 'resp_67ccd2bed1ec8190b14f964abc054267',
    object: 'response',
    created_at: 1741476542,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: 'gpt-4.1-2025-04-14',
    output,
    parallel_tool_calls: true,
    usage,
  };
}

const messageItem = (text: string) => responses.messageItem('msg_67ccd2bf17f0819081ff3bb2cf6508e6', text);
const functionCallItem = responses.functionCallItem;
const usage = responses.usage;

/** The first events of a Responses stream: a message item and its text deltas. */
function responsesStreamStart(...deltas: string[]): unknown[] {
  const created = {
    id: 'resp_s',
    object: 'response',
    created_at: 1741290958,
    status: 'in_progress',
    model: 'gpt-4.1-2025-04-14',
    output: [],
  };
  return responses.sse([
    { type: 'response.created', sequence_number: 0, response: created },
    { ...responses.messageAdded('msg_s'), sequence_number: 1 },
    ...deltas.map((delta, index) => ({ ...responses.textDelta('msg_s', delta), sequence_number: 2 + index })),
  ]);
}

const textReply = (text: string): FakeReply => ({ json: response([messageItem(text)], usage(10, 0, 3)) });

describeProviderConformance({
  kind: 'openai',
  model: MODEL,
  basePath: '/v1',
  errorBody: (status, message) => ({
    error: {
      message,
      type: status === 429 ? 'requests' : status === 401 ? 'invalid_request_error' : 'server_error',
      param: null,
      code: status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : null,
    },
  }),
  textReply,
  unfinishedStream: responsesStreamStart('Hel', 'lo'),
  streamedReply: (deltas) => ({
    sse: [
      ...responsesStreamStart(...deltas),
      ...responses.sse([
        {
          type: 'response.output_item.done',
          sequence_number: 2 + deltas.length,
          output_index: 0,
          item: { ...messageItem(deltas.join('')), id: 'msg_s' },
        },
        {
          type: 'response.completed',
          sequence_number: 3 + deltas.length,
          response: {
            id: 'resp_s',
            object: 'response',
            created_at: 1741290958,
            status: 'completed',
            model: 'gpt-4.1-2025-04-14',
            output: [],
            usage: usage(10, 0, deltas.length),
          },
        },
      ]),
    ],
  }),
});

describe('openai: the Responses API wire format', () => {
  const fake = useFakeProvider('openai', MODEL, (origin) => ({
    api_key: 'sk-openai-test',
    base_url: `${origin}/v1`,
    max_tokens: 2048,
    temperature: 0.3,
  }));

  it('sends the system message first, images, function calls and one function_call_output per result', async () => {
    const { sent } = await fake.send(textReply('5, and 4+5 failed.'), requestOf(toolRoundChat()));
    expectSentTo(sent, '/v1/responses', { authorization: 'Bearer sk-openai-test' });
    const body = sent.body;
    expect(body.model).toBe(MODEL);
    expect(body.max_output_tokens).toBe(2048);
    expect(body.temperature).toBe(0.3);
    expect(body.input).toEqual([
      ...responses.toolRoundInputStart(),
      { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' },
      { type: 'function_call', call_id: 'call_2', name: 'add', arguments: '{"a":4,"b":5}' },
      { type: 'function_call_output', call_id: 'call_1', output: '5' },
      // The API has no error flag: the package marks an error result by wrapping it.
      { type: 'function_call_output', call_id: 'call_2', output: '{"error":"overflow"}' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'add',
        description: 'Adds two numbers.',
        parameters: addTool.inputSchema,
        strict: false,
      },
    ]);
    expect(body.tool_choice).toBe('auto');
  });

  it('reads text, parallel function calls, usage with cached tokens, and the x-ratelimit headers', async () => {
    const { completion } = await fake.send(
      {
        json: response(
          [
            messageItem('Adding both.'),
            functionCallItem('fc_1', 'call_a', '{"a":2,"b":3}'),
            functionCallItem('fc_2', 'call_b', '{"a":4,"b":5}'),
          ],
          usage(2006, 1920, 300),
        ),
        headers: {
          'x-ratelimit-limit-requests': '500',
          'x-ratelimit-remaining-requests': '499',
          'x-ratelimit-remaining-tokens': '28000',
          'x-ratelimit-reset-requests': '120ms',
          'x-ratelimit-reset-tokens': '4s',
        },
      },
      requestOf([userMessage(QUESTION)]),
    );
    expect(completion.parts).toEqual(parallelAddCallParts('call_a', 'call_b'));
    expect(completion.usage).toEqual({
      input_tokens: 2006,
      output_tokens: 300,
      cached_input_tokens: 1920,
      requests: 1,
    });
    expect(completion.rateLimit).toEqual({ remainingRequests: 499, remainingTokens: 28000, resetMs: 4000 });
  });

  it('a 429 says how long to wait in retry-after-ms and what is left in x-ratelimit', async () => {
    const error = await fake.sendFailure(
      {
        json: {
          error: {
            message: 'Rate limit reached for gpt-4.1 on tokens per min.',
            type: 'tokens',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
        status: 429,
        headers: {
          'retry-after-ms': '2500',
          'retry-after': '3',
          'x-ratelimit-remaining-requests': '100',
          'x-ratelimit-remaining-tokens': '0',
          'x-ratelimit-reset-tokens': '2.5s',
        },
      },
      requestOf([userMessage('Hi')]),
    );
    expect(error.code).toBe('model_rate_limited');
    expect(error.retryAfterMs).toBe(2500);
    expect(error.message).toContain('Rate limit reached for gpt-4.1 on tokens per min.');
    expect(error.details?.rate_limit).toEqual({ remainingRequests: 100, remainingTokens: 0, resetMs: 2500 });
  });

  it('streams text deltas and returns the same completion', async () => {
    const created = {
      id: 'resp_stream',
      object: 'response',
      created_at: 1741290958,
      status: 'in_progress',
      model: 'gpt-4.1-2025-04-14',
      output: [],
    };
    const sse = responses.sse([
      { type: 'response.created', sequence_number: 0, response: created },
      { type: 'response.in_progress', sequence_number: 1, response: created },
      { ...responses.messageAdded('msg_s'), sequence_number: 2 },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        item_id: 'msg_s',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
      { ...responses.textDelta('msg_s', 'Adding '), sequence_number: 4 },
      { ...responses.textDelta('msg_s', 'both.'), sequence_number: 5 },
      {
        type: 'response.output_text.done',
        sequence_number: 6,
        item_id: 'msg_s',
        output_index: 0,
        content_index: 0,
        text: 'Adding both.',
      },
      {
        type: 'response.output_item.done',
        sequence_number: 7,
        output_index: 0,
        item: messageItem('Adding both.'),
      },
      {
        type: 'response.output_item.added',
        sequence_number: 8,
        output_index: 1,
        item: {
          type: 'function_call',
          id: 'fc_s1',
          call_id: 'call_s1',
          name: 'add',
          arguments: '',
          status: 'in_progress',
        },
      },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: 9,
        item_id: 'fc_s1',
        output_index: 1,
        delta: '{"a":2,',
      },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: 10,
        item_id: 'fc_s1',
        output_index: 1,
        delta: '"b":3}',
      },
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 11,
        item_id: 'fc_s1',
        output_index: 1,
        arguments: '{"a":2,"b":3}',
      },
      {
        type: 'response.output_item.done',
        sequence_number: 12,
        output_index: 1,
        item: functionCallItem('fc_s1', 'call_s1', '{"a":2,"b":3}'),
      },
      {
        type: 'response.completed',
        sequence_number: 13,
        response: { ...created, status: 'completed', usage: usage(50, 0, 20) },
      },
    ]);
    const { completion, deltas, sent } = await fake.stream(
      { sse, headers: { 'x-ratelimit-remaining-requests': '42' } },
      [userMessage(QUESTION)],
    );
    expect(sent.body.stream).toBe(true);
    expect(deltas).toEqual(['Adding ', 'both.']);
    expect(completion).toEqual({
      parts: [
        { type: 'text', text: 'Adding both.' },
        { type: 'tool_call', id: 'call_s1', name: 'add', arguments: '{"a":2,"b":3}' },
      ],
      usage: { input_tokens: 50, output_tokens: 20, cached_input_tokens: 0, requests: 1 },
      rateLimit: { remainingRequests: 42 },
    });
  });

  it('asks for structured output (text.format json_schema) for an agent with an output_schema', async () => {
    const { sent } = await fake.send(
      textReply('{"answer":"4"}'),
      requestOf([userMessage(QUESTION)], { options: { responseFormat: answerFormat } }),
    );
    expect(sent.body.text).toMatchObject({
      format: { type: 'json_schema', name: 'answer', schema: answerFormat.schema },
    });
    // Tools stay offered beside it.
    expect(sent.body.tool_choice).toBe('auto');
  });
});
