import { describe, expect, it } from 'vitest';
import { expectSentTo, type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { describeProviderConformance } from './provider-conformance.js';
import {
  addTool,
  IMAGE_URL,
  PNG_BASE64,
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

// Shapes from https://docs.anthropic.com/en/api/messages and /en/docs/build-with-claude/streaming.
const MODEL = 'claude-sonnet-4-5';

function messageReply(content: unknown[], usage: Record<string, number>, stopReason = 'end_turn'): unknown {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

const textReply = (text: string): FakeReply => ({
  json: messageReply([{ type: 'text', text }], { input_tokens: 12, output_tokens: 4 }),
});

type NamedEvent = [string, unknown];
const events = (...items: NamedEvent[]) => items.map(([event, data]) => ({ event, data }));
/** The message_start event of a streamed reply. */
const messageStart = (id: string, usage: Record<string, number>): NamedEvent => [
  'message_start',
  {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      content: [],
      model: MODEL,
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  },
];
const textBlockStart = (): NamedEvent => [
  'content_block_start',
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
];
const textDelta = (text: string): NamedEvent => [
  'content_block_delta',
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
];

describeProviderConformance({
  kind: 'anthropic',
  model: MODEL,
  basePath: '/v1',
  errorBody: (status, message) => ({
    type: 'error',
    error: {
      type: status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : 'api_error',
      message,
    },
  }),
  textReply,
  unfinishedStream: events(
    messageStart('msg_cut', { input_tokens: 5, output_tokens: 1 }),
    textBlockStart(),
    textDelta('Hel'),
    textDelta('lo'),
  ),
  streamedReply: (deltas) => ({
    sse: events(
      messageStart('msg_whole', { input_tokens: 5, output_tokens: 1 }),
      textBlockStart(),
      ...deltas.map(textDelta),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: deltas.length },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ),
  }),
});

describe('anthropic: the Messages API wire format', () => {
  const fake = useFakeProvider('anthropic', MODEL, (origin) => ({
    api_key: 'sk-ant-test',
    base_url: `${origin}/v1`,
    max_tokens: 1024,
    temperature: 0.2,
    headers: { 'x-team': 'ratchet' },
  }));

  it('sends the system prompt apart, images, tool calls, and the results grouped in one user message', async () => {
    const { sent } = await fake.send(textReply('5 and an error.'), requestOf(toolRoundChat()));
    expectSentTo(sent, '/v1/messages', { 'x-api-key': 'sk-ant-test', 'x-team': 'ratchet' });
    expect(sent.headers['anthropic-version']).toBeDefined();
    const body = sent.body;
    expect(body.model).toBe(MODEL);
    expect(body.max_tokens).toBe(1024);
    expect(body.temperature).toBe(0.2);
    expect(body.stream).not.toBe(true);
    expect(body.system).toEqual([{ type: 'text', text: SYSTEM_PROMPT }]);
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: QUESTION },
          { type: 'image', source: { type: 'url', url: IMAGE_URL } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'A cat. Adding now.' },
          { type: 'tool_use', id: 'call_1', name: 'add', input: { a: 2, b: 3 } },
          { type: 'tool_use', id: 'call_2', name: 'add', input: { a: 4, b: 5 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '5' },
          { type: 'tool_result', tool_use_id: 'call_2', content: 'overflow', is_error: true },
        ],
      },
    ]);
    expect(body.tools).toEqual([
      {
        name: 'add',
        description: 'Adds two numbers.',
        input_schema: addTool.inputSchema,
      },
    ]);
    expect(body.tool_choice).toEqual({ type: 'auto' });
  });

  it('joins consecutive messages of one role into one turn, as the Messages API requires alternating roles', async () => {
    // Two user messages in a row: a run's input and a message steered in before its next request.
    const { sent } = await fake.send(
      textReply('Both read.'),
      requestOf([userMessage('First, this.'), userMessage('And then this.')], { tools: [] }),
    );
    expect(sent.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'First, this.' },
          { type: 'text', text: 'And then this.' },
        ],
      },
    ]);
  });

  it("a request's own options win over the provider's defaults", async () => {
    const { sent } = await fake.send(
      textReply('ok'),
      requestOf([userMessage('Hi')], { options: { temperature: 0.9, maxTokens: 64 }, tools: [] }),
    );
    const body = sent.body;
    expect(body.temperature).toBe(0.9);
    expect(body.max_tokens).toBe(64);
    expect(body.tools).toBeUndefined();
  });

  it('reads text, parallel tool calls, usage with cache reads, and the rate-limit headers', async () => {
    const reset = new Date(Date.now() + 30_000).toISOString();
    const { completion } = await fake.send(
      {
        json: messageReply(
          [
            { type: 'text', text: 'Adding both.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'add', input: { a: 2, b: 3 } },
            { type: 'tool_use', id: 'toolu_01B', name: 'add', input: { a: 4, b: 5 } },
          ],
          {
            input_tokens: 20,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 1500,
            output_tokens: 60,
          },
          'tool_use',
        ),
        headers: {
          'anthropic-ratelimit-requests-remaining': '49',
          'anthropic-ratelimit-requests-reset': reset,
          'anthropic-ratelimit-tokens-remaining': '38000',
          'anthropic-ratelimit-tokens-reset': reset,
        },
      },
      requestOf([userMessage(QUESTION)]),
    );
    expect(completion.parts).toEqual(parallelAddCallParts('toolu_01A', 'toolu_01B'));
    expect(completion.usage).toEqual({
      input_tokens: 1620,
      output_tokens: 60,
      cached_input_tokens: 1500,
      requests: 1,
    });
    expect(completion.rateLimit?.remainingRequests).toBe(49);
    expect(completion.rateLimit?.remainingTokens).toBe(38000);
    expect(completion.rateLimit?.resetMs).toBeGreaterThan(25_000);
    expect(completion.rateLimit?.resetMs).toBeLessThanOrEqual(30_000);
  });

  it('a 529 overloaded error is a retryable server error; a 429 carries the rate-limit headers', async () => {
    const overloaded = await fake.sendFailure(
      {
        json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        status: 529,
      },
      requestOf([userMessage('Hi')]),
    );
    expect(overloaded).toMatchObject({ code: 'model_server_error', retryable: true });

    const limited = await fake.sendFailure(
      {
        json: {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'Number of request tokens exceeded.' },
        },
        status: 429,
        headers: {
          'retry-after': '12',
          'anthropic-ratelimit-requests-remaining': '10',
          'anthropic-ratelimit-input-tokens-remaining': '0',
          'anthropic-ratelimit-output-tokens-remaining': '8000',
        },
      },
      requestOf([userMessage('Hi')]),
    );
    expect(limited.code).toBe('model_rate_limited');
    expect(limited.retryAfterMs).toBe(12_000);
    expect(limited.details?.rate_limit).toEqual({
      remainingRequests: 10,
      remainingTokens: 0,
    });
  });

  describe('streaming', () => {
    const streamStart = (): NamedEvent[] => [
      messageStart('msg_stream', { input_tokens: 472, cache_read_input_tokens: 400, output_tokens: 2 }),
      textBlockStart(),
      ['ping', { type: 'ping' }],
      textDelta('Let me '),
      textDelta('add that.'),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ];

    it('passes text deltas on and returns the same completion as without streaming', async () => {
      const { completion, deltas, sent } = await fake.stream(
        {
          sse: events(
            ...streamStart(),
            [
              'content_block_start',
              {
                type: 'content_block_start',
                index: 1,
                content_block: { type: 'tool_use', id: 'toolu_S1', name: 'add', input: {} },
              },
            ],
            [
              'content_block_delta',
              {
                type: 'content_block_delta',
                index: 1,
                delta: { type: 'input_json_delta', partial_json: '{"a": 2,' },
              },
            ],
            [
              'content_block_delta',
              {
                type: 'content_block_delta',
                index: 1,
                delta: { type: 'input_json_delta', partial_json: ' "b": 3}' },
              },
            ],
            ['content_block_stop', { type: 'content_block_stop', index: 1 }],
            [
              'message_delta',
              {
                type: 'message_delta',
                delta: { stop_reason: 'tool_use', stop_sequence: null },
                usage: { output_tokens: 31 },
              },
            ],
            ['message_stop', { type: 'message_stop' }],
          ),
          headers: { 'anthropic-ratelimit-requests-remaining': '7' },
        },
        [userMessage(QUESTION)],
      );
      expect(sent.body.stream).toBe(true);
      expect(deltas).toEqual(['Let me ', 'add that.']);
      expect(completion.parts).toEqual([
        { type: 'text', text: 'Let me add that.' },
        { type: 'tool_call', id: 'toolu_S1', name: 'add', arguments: '{"a": 2, "b": 3}' },
      ]);
      expect(completion.usage).toEqual({
        input_tokens: 872,
        output_tokens: 31,
        cached_input_tokens: 400,
        requests: 1,
      });
      expect(completion.rateLimit).toEqual({ remainingRequests: 7 });
    });

    it('an error event mid-stream fails the request (overloaded: retryable)', async () => {
      const { error, deltas } = await fake.streamFailure(
        {
          sse: events(...streamStart(), [
            'error',
            { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
          ]),
        },
        [userMessage('Hi')],
      );
      expect(error.code).toBe('model_server_error');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('Overloaded');
      expect(deltas).toEqual(['Let me ', 'add that.']);
    });
  });

  it('asks for structured output only in a request without tools (it would take the place of tool calls)', async () => {
    const withTools = await fake.send(
      textReply('{"answer":"4"}'),
      requestOf([userMessage(QUESTION)], { options: { responseFormat: answerFormat } }),
    );
    expect(withTools.sent.body.output_config).toBeUndefined();
    expect(withTools.sent.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['add']);
    expect(withTools.sent.body.tool_choice).toEqual({ type: 'auto' });
    fake.server.requests.length = 0;
    const withoutTools = await fake.send(
      textReply('{"answer":"4"}'),
      requestOf([userMessage(QUESTION)], { tools: [], options: { responseFormat: answerFormat } }),
    );
    const body = withoutTools.sent.body;
    // Native structured output (output_config.format), or the package's JSON tool where the model has none.
    expect(
      body.output_config?.format ?? body.tools?.find((tool: { name: string }) => tool.name === 'json'),
    ).toBeDefined();
  });
});
