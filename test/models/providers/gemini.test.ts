import { describe, expect, it } from 'vitest';
import { expectSentTo, type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { describeProviderConformance } from './provider-conformance.js';
import {
  addTool,
  failureOf,
  IMAGE_URL,
  neverAborted,
  PNG_BASE64,
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

// Shapes from https://ai.google.dev/api/generate-content (GenerateContentResponse, streamGenerateContent
// with alt=sse) and https://ai.google.dev/gemini-api/docs/function-calling.
const MODEL = 'gemini-2.5-flash';

function generateContentResponse(parts: unknown[], usageMetadata: Record<string, number>): unknown {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata,
    modelVersion: MODEL,
    responseId: 'mAitaLmkHPPlz7IPvtfUqQ4',
  };
}

const textReply = (text: string): FakeReply => ({
  json: generateContentResponse([{ text }], {
    promptTokenCount: 8,
    candidatesTokenCount: 3,
    totalTokenCount: 11,
  }),
});

const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
};

describeProviderConformance({
  kind: 'gemini',
  model: MODEL,
  basePath: '/v1beta',
  errorBody: (status, message) => ({
    error: { code: status, message, status: statusNames[status] ?? 'UNKNOWN' },
  }),
  textReply,
  unfinishedStream: ['Hel', 'lo'].map((text) => ({
    candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
    modelVersion: MODEL,
  })),
  streamedReply: (deltas) => ({
    sse: [
      ...deltas.map((text) => ({
        candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
        modelVersion: MODEL,
      })),
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: deltas.length, totalTokenCount: 30 },
        modelVersion: MODEL,
      },
    ],
  }),
});

describe('gemini: the generateContent wire format', () => {
  const fake = useFakeProvider('gemini', MODEL, (origin) => ({
    api_key: 'gemini-test-key',
    base_url: `${origin}/v1beta`,
    max_tokens: 512,
    temperature: 0,
  }));
  const { completer } = fake;

  it('sends systemInstruction, images, functionCall parts and both functionResponses in one turn', async () => {
    const { sent } = await fake.send(textReply('5; the other failed.'), requestOf(toolRoundChat()));
    expectSentTo(sent, `/v1beta/models/${MODEL}:generateContent`, { 'x-goog-api-key': 'gemini-test-key' });
    const body = sent.body;
    expect(body.systemInstruction).toEqual({ parts: [{ text: SYSTEM_PROMPT }] });
    expect(body.generationConfig).toMatchObject({ temperature: 0, maxOutputTokens: 512 });
    expect(body.contents).toHaveLength(3);
    expect(body.contents[0]).toEqual({
      role: 'user',
      parts: [
        { text: QUESTION },
        { fileData: { mimeType: 'image/png', fileUri: IMAGE_URL } },
        { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
      ],
    });
    expect(body.contents[1]).toMatchObject({
      role: 'model',
      parts: [
        { text: 'A cat. Adding now.' },
        { functionCall: { id: 'call_1', name: 'add', args: { a: 2, b: 3 } } },
        { functionCall: { id: 'call_2', name: 'add', args: { a: 4, b: 5 } } },
      ],
    });
    expect(body.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'call_1', name: 'add', response: { name: 'add', content: '5' } } },
        { functionResponse: { id: 'call_2', name: 'add', response: { name: 'add', error: 'overflow' } } },
      ],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'add',
            description: 'Adds two numbers.',
            // The JSON Schema as is (FunctionDeclaration.parametersJsonSchema), not the OpenAPI subset.
            parametersJsonSchema: addTool.inputSchema,
          },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
  });

  it('a system message later in the chat goes as user text (Gemini takes system text only first)', async () => {
    const { sent } = await fake.send(
      textReply('ok'),
      requestOf([
        { ...userMessage('Hi'), role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
        userMessage('Hi'),
        { ...userMessage('Note: the user is in a hurry.'), role: 'system' },
      ]),
    );
    const body = sent.body;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'user', parts: [{ text: 'Note: the user is in a hurry.' }] },
    ]);
  });

  it('reads text, parallel function calls (with ids made up for them) and usage with cached tokens', async () => {
    const { completion } = await fake.send(
      {
        json: generateContentResponse(
          [
            { text: 'Adding both.' },
            { functionCall: { name: 'add', args: { a: 2, b: 3 } } },
            { functionCall: { name: 'add', args: { a: 4, b: 5 } } },
          ],
          {
            promptTokenCount: 4096,
            cachedContentTokenCount: 2048,
            candidatesTokenCount: 40,
            totalTokenCount: 4136,
          },
        ),
      },
      requestOf([userMessage(QUESTION)]),
    );
    const [text, first, second] = completion.parts;
    expect(text).toEqual({ type: 'text', text: 'Adding both.' });
    expect(first).toMatchObject({ type: 'tool_call', name: 'add', arguments: '{"a":2,"b":3}' });
    expect(second).toMatchObject({ type: 'tool_call', name: 'add', arguments: '{"a":4,"b":5}' });
    expect(first?.type === 'tool_call' && first.id).toBeTruthy();
    expect(first?.type === 'tool_call' && second?.type === 'tool_call' && first.id !== second.id).toBe(true);
    expect(completion.usage).toEqual({
      input_tokens: 4096,
      output_tokens: 40,
      cached_input_tokens: 2048,
      requests: 1,
    });
    expect(completion.rateLimit).toBeUndefined();
  });

  it('an image URL without a known extension cannot be sent: Gemini needs its exact type', async () => {
    const chat = [
      {
        ...userMessage('What is this?'),
        parts: [{ type: 'image' as const, url: 'https://example.com/render?id=42' }],
      },
    ];
    const error = await failureOf(completer().complete(requestOf(chat), neverAborted()));
    expect(error.code).toBe('model_request_invalid');
    expect(error.retryable).toBe(false);
    expect(fake.server.requests).toHaveLength(0);
  });

  it('streams from streamGenerateContent?alt=sse and returns the same completion', async () => {
    const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
      modelVersion: MODEL,
      responseId: 'stream-1',
    });
    const { completion, deltas, sent } = await fake.stream(
      {
        sse: [
          chunk([{ text: 'The answer ' }]),
          chunk([{ text: 'is 5.' }]),
          chunk([{ functionCall: { name: 'add', args: { a: 1, b: 1 } } }], { finishReason: 'STOP' }),
          {
            candidates: [
              { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 },
            ],
            usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 9, totalTokenCount: 39 },
            modelVersion: MODEL,
          },
        ],
      },
      [userMessage(QUESTION)],
    );
    expect(sent.path).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    expect(deltas).toEqual(['The answer ', 'is 5.']);
    expect(completion.parts).toEqual([
      { type: 'text', text: 'The answer is 5.' },
      { type: 'tool_call', id: expect.any(String), name: 'add', arguments: '{"a":1,"b":1}' },
    ]);
    expect(completion.usage).toEqual({
      input_tokens: 30,
      output_tokens: 9,
      cached_input_tokens: 0,
      requests: 1,
    });
  });

  it('asks for a JSON response only in a request without tools (Gemini refuses both at once)', async () => {
    const withTools = await fake.send(
      textReply('{"answer":"4"}'),
      requestOf([userMessage(QUESTION)], { options: { responseFormat: answerFormat } }),
    );
    expect(withTools.sent.body.generationConfig?.responseMimeType).toBeUndefined();
    fake.server.requests.length = 0;
    const withoutTools = await fake.send(
      textReply('{"answer":"4"}'),
      requestOf([userMessage(QUESTION)], { tools: [], options: { responseFormat: answerFormat } }),
    );
    expect(withoutTools.sent.body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
  });
});
