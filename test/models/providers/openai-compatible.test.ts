import { describe, expect, it } from 'vitest';
import { expectSentTo, type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { describeProviderConformance } from './provider-conformance.js';
import {
  addTool,
  IMAGE_URL,
  PNG_DATA_URL,
  parallelAddCallParts,
  QUESTION,
  requestOf,
  SYSTEM_PROMPT,
  toolRoundChat,
  userMessage,
} from './provider-fixtures.js';

const answerFormat = {
  type: 'json' as const,
  schema: { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } },
  name: 'answer',
};

// POST /v1/chat/completions as Ollama, vLLM, llama.cpp server and LM Studio serve it. Shapes from
// https://platform.openai.com/docs/api-reference/chat (object, chunk) which those servers follow.
const MODEL = 'qwen2.5:7b-instruct';

function chatCompletion(message: Record<string, unknown>, finishReason: string, usage: unknown): unknown {
  return {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1741570283,
    model: MODEL,
    choices: [
      { index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason },
    ],
    usage,
    system_fingerprint: 'fp_ollama',
  };
}

const toolCall = (id: string, args: string) => ({
  id,
  type: 'function',
  function: { name: 'add', arguments: args },
});

const textReply = (text: string): FakeReply => ({
  json: chatCompletion({ content: text }, 'stop', {
    prompt_tokens: 9,
    completion_tokens: 3,
    total_tokens: 12,
  }),
});

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'chatcmpl-stream',
  object: 'chat.completion.chunk',
  created: 1741570283,
  model: MODEL,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
});

describeProviderConformance({
  kind: 'openai_compatible',
  model: MODEL,
  basePath: '/v1',
  errorBody: (status, message) => ({
    error: { message, type: status === 429 ? 'rate_limit_error' : 'api_error', param: null, code: null },
  }),
  textReply,
  unfinishedStream: [chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' })],
  streamedReply: (deltas) => ({
    sse: [
      ...deltas.map((content, index) => chunk(index === 0 ? { role: 'assistant', content } : { content })),
      chunk({}, 'stop'),
      {
        id: 'chatcmpl-stream',
        object: 'chat.completion.chunk',
        created: 1741570283,
        model: MODEL,
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: deltas.length, total_tokens: 9 + deltas.length },
      },
    ],
    done: true,
  }),
});

describe('openai_compatible: the chat completions wire format', () => {
  const fake = useFakeProvider('openai_compatible', MODEL, (origin) => ({
    base_url: `${origin}/v1`,
    temperature: 0.1,
    max_tokens: 256,
  }));

  it('sends the system message, image_url parts, tool_calls and one tool-role message per result', async () => {
    const { sent } = await fake.send(textReply('5; 4+5 failed.'), requestOf(toolRoundChat()), {
      api_key: 'local-key',
    });
    expectSentTo(sent, '/v1/chat/completions', { authorization: 'Bearer local-key' });
    const body = sent.body;
    expect(body.model).toBe(MODEL);
    expect(body.temperature).toBe(0.1);
    expect(body.max_tokens).toBe(256);
    expect(body.messages).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      {
        role: 'user',
        content: [
          { type: 'text', text: QUESTION },
          { type: 'image_url', image_url: { url: IMAGE_URL } },
          { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        ],
      },
      {
        role: 'assistant',
        content: 'A cat. Adding now.',
        tool_calls: [toolCall('call_1', '{"a":2,"b":3}'), toolCall('call_2', '{"a":4,"b":5}')],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '5' },
      { role: 'tool', tool_call_id: 'call_2', content: 'overflow' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds two numbers.',
          parameters: addTool.inputSchema,
        },
      },
    ]);
    expect(body.tool_choice).toBe('auto');
  });

  it('needs no API key: a local server gets no authorization header', async () => {
    const { sent } = await fake.send(textReply('hi'), requestOf([userMessage('Hi')], { tools: [] }));
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.tools).toBeUndefined();
  });

  it('reads text, parallel tool calls and usage with cached prompt tokens', async () => {
    const { completion } = await fake.send(
      {
        json: chatCompletion(
          {
            content: 'Adding both.',
            tool_calls: [toolCall('call_p1', '{"a":2,"b":3}'), toolCall('call_p2', '{"a":4,"b":5}')],
          },
          'tool_calls',
          {
            prompt_tokens: 1117,
            completion_tokens: 46,
            total_tokens: 1163,
            prompt_tokens_details: { cached_tokens: 1024 },
          },
        ),
      },
      requestOf([userMessage(QUESTION)]),
    );
    expect(completion).toEqual({
      parts: parallelAddCallParts('call_p1', 'call_p2'),
      usage: { input_tokens: 1117, output_tokens: 46, cached_input_tokens: 1024, requests: 1 },
    });
  });

  it('invalid JSON arguments come back as the raw text, for the engine to reject', async () => {
    const { completion } = await fake.send(
      {
        json: chatCompletion(
          { content: null, tool_calls: [toolCall('call_bad', '{"a": 2,')] },
          'tool_calls',
          {
            prompt_tokens: 5,
            completion_tokens: 5,
            total_tokens: 10,
          },
        ),
      },
      requestOf([userMessage('Add')]),
    );
    expect(completion.parts).toEqual([
      { type: 'tool_call', id: 'call_bad', name: 'add', arguments: '{"a": 2,' },
    ]);
  });

  it('streams deltas, asks for usage in the stream, and returns the same completion', async () => {
    const { completion, deltas, sent } = await fake.stream(
      {
        sse: [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Adding ' }),
          chunk({ content: 'both.' }),
          chunk({
            tool_calls: [
              { index: 0, id: 'call_s1', type: 'function', function: { name: 'add', arguments: '' } },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
          chunk({
            tool_calls: [
              {
                index: 1,
                id: 'call_s2',
                type: 'function',
                function: { name: 'add', arguments: '{"a":4,"b":5}' },
              },
            ],
          }),
          chunk({}, 'tool_calls'),
          {
            id: 'chatcmpl-stream',
            object: 'chat.completion.chunk',
            created: 1741570283,
            model: MODEL,
            choices: [],
            usage: {
              prompt_tokens: 60,
              completion_tokens: 25,
              total_tokens: 85,
              prompt_tokens_details: { cached_tokens: 32 },
            },
          },
        ],
        done: true,
      },
      [userMessage(QUESTION)],
    );
    const body = sent.body;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(deltas).toEqual(['Adding ', 'both.']);
    expect(completion).toEqual({
      parts: [
        { type: 'text', text: 'Adding both.' },
        { type: 'tool_call', id: 'call_s1', name: 'add', arguments: '{"a":2,"b":3}' },
        { type: 'tool_call', id: 'call_s2', name: 'add', arguments: '{"a":4,"b":5}' },
      ],
      usage: { input_tokens: 60, output_tokens: 25, cached_input_tokens: 32, requests: 1 },
    });
  });

  it('an error chunk mid-stream fails the request', async () => {
    const { error, deltas } = await fake.streamFailure(
      {
        sse: [
          chunk({ role: 'assistant', content: 'Hel' }),
          {
            error: {
              message: 'The model crashed while generating.',
              type: 'server_error',
              code: 'internal_error',
            },
          },
        ],
      },
      [userMessage('Hi')],
    );
    expect(deltas).toEqual(['Hel']);
    expect(error.code).toBe('model_server_error');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('The model crashed while generating.');
  });

  it('sends response_format json_schema only to a server said to take it (structured_outputs: true)', async () => {
    const request = requestOf([userMessage(QUESTION)], { options: { responseFormat: answerFormat } });
    const plain = await fake.send(textReply('{"answer":"4"}'), request);
    expect(plain.sent.body.response_format).toBeUndefined();
    fake.server.requests.length = 0;
    const structured = await fake.send(textReply('{"answer":"4"}'), request, { structured_outputs: true });
    expect(structured.sent.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'answer', schema: answerFormat.schema },
    });
  });
});
