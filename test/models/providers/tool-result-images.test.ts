import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/chat/index.js';
import { type FakeReply, useFakeProvider } from './fake-provider-server.js';
import { PNG_BASE64, requestOf, responses } from './provider-fixtures.js';

// A tool result with an image (a browser screenshot), as each provider's API takes it.
const at = '2025-01-01T00:00:00.000Z';
const chat: Message[] = [
  {
    id: 'u',
    sender: 'user',
    role: 'user',
    parts: [{ type: 'text', text: 'Look.' }],
    metadata: {},
    created_at: at,
  },
  {
    id: 'a',
    sender: 'helper',
    role: 'assistant',
    parts: [{ type: 'tool_call', id: 'call_1', name: 'add', arguments: '{"a":1,"b":2}' }],
    metadata: {},
    created_at: at,
  },
  {
    id: 't',
    sender: 'add',
    role: 'tool',
    parts: [
      {
        type: 'tool_result',
        tool_call_id: 'call_1',
        content: '{"url":"http://example.com/"}',
        is_error: false,
        images: [{ data: PNG_BASE64, media_type: 'image/png' }],
      },
    ],
    metadata: {},
    created_at: at,
  },
];

describe('a tool result with an image', () => {
  describe('anthropic', () => {
    const fake = useFakeProvider('anthropic', 'claude-sonnet-4-5', (origin) => ({
      api_key: 'sk-ant-test',
      base_url: `${origin}/v1`,
    }));
    const reply: FakeReply = {
      json: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    };

    it('goes as an image block inside the tool_result', async () => {
      const { sent } = await fake.send(reply, requestOf(chat));
      expect(sent.body.messages.at(-1)).toEqual({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_1',
            content: [
              { type: 'text', text: '{"url":"http://example.com/"}' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
            ],
          },
        ],
      });
    });
  });

  describe('openai (Responses API)', () => {
    const fake = useFakeProvider('openai', 'gpt-4.1', (origin) => ({
      api_key: 'sk-openai-test',
      base_url: `${origin}/v1`,
    }));
    const reply: FakeReply = {
      json: {
        id: 'resp_1',
        object: 'response',
        created_at: 1741476542,
        status: 'completed',
        error: null,
        incomplete_details: null,
        model: 'gpt-4.1',
        output: [responses.messageItem('msg_1', 'ok')],
        parallel_tool_calls: true,
        usage: responses.usage(1, 0, 1),
      },
    };

    it('goes as an input_image item of the function_call_output', async () => {
      const { sent } = await fake.send(reply, requestOf(chat));
      expect(sent.body.input.at(-1)).toEqual({
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: '{"url":"http://example.com/"}' },
          { type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}` },
        ],
      });
    });
  });

  describe('gemini', () => {
    const fake = useFakeProvider('gemini', 'gemini-2.5-flash', (origin) => ({
      api_key: 'gemini-test-key',
      base_url: `${origin}/v1beta`,
    }));
    const reply: FakeReply = {
      json: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
        modelVersion: 'gemini-2.5-flash',
      },
    };

    it('goes with the functionResponse, the image as inline data', async () => {
      const { sent } = await fake.send(reply, requestOf(chat));
      const turn = sent.body.contents.at(-1);
      expect(JSON.stringify(turn)).toContain(PNG_BASE64);
      expect(turn.parts[0].functionResponse.name).toBe('add');
    });
  });
});
