import { describe, expect, it } from 'vitest';
import type { Message, Part } from '../../../src/chat/index.js';
import { toSdkPrompt } from '../../../src/models/providers/to-sdk-prompt.js';
import { PNG_BASE64, toolRoundChat } from './provider-fixtures.js';

let counter = 0;
function message(role: Message['role'], parts: Part[], sender = role === 'tool' ? 'add' : role): Message {
  counter += 1;
  return { id: `m${counter}`, sender, role, parts, metadata: {}, created_at: '2025-01-01T00:00:00.000Z' };
}
const text = (value: string): Part => ({ type: 'text', text: value });
const result = (id: string, content: string, isError = false): Part => ({
  type: 'tool_result',
  tool_call_id: id,
  content,
  is_error: isError,
});

describe('toSdkPrompt', () => {
  it('translates a tool round: system prompt, multi-part user turn, calls, and the results in one tool message', () => {
    expect(toSdkPrompt(toolRoundChat())).toEqual([
      { role: 'system', content: 'You are terse. Use tools for arithmetic.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture? And what are 2+3 and 4+5?' },
          {
            type: 'file',
            mediaType: 'image/png',
            data: { type: 'url', url: new URL('https://example.com/images/cat.png') },
          },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'A cat. Adding now.' },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: { a: 2, b: 3 } },
          { type: 'tool-call', toolCallId: 'call_2', toolName: 'add', input: { a: 4, b: 5 } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'add',
            output: { type: 'text', value: '5' },
          },
          {
            type: 'tool-result',
            toolCallId: 'call_2',
            toolName: 'add',
            output: { type: 'error-text', value: 'overflow' },
          },
        ],
      },
    ]);
  });

  it("names each result after its call, or after the tool message's sender when the call is not in the chat", () => {
    const prompt = toSdkPrompt([
      message('assistant', [{ type: 'tool_call', id: 'c1', name: 'search', arguments: '{}' }]),
      message('tool', [result('c1', 'found')], 'whatever'),
      message('tool', [result('c0', 'late')], 'fetch_page'),
    ]);
    expect(prompt[1]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'search',
          output: { type: 'text', value: 'found' },
        },
        {
          type: 'tool-result',
          toolCallId: 'c0',
          toolName: 'fetch_page',
          output: { type: 'text', value: 'late' },
        },
      ],
    });
  });

  it('only the leading system messages are the system prompt; a later one is user text', () => {
    expect(
      toSdkPrompt([
        message('system', [text('Rule one.')]),
        message('system', [text('Rule two.')]),
        message('user', [text('Hi')]),
        message('system', [text('The user is in a hurry.')]),
      ]),
    ).toEqual([
      { role: 'system', content: 'Rule one.' },
      { role: 'system', content: 'Rule two.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'user', content: [{ type: 'text', text: 'The user is in a hurry.' }] },
    ]);
  });

  it('keeps messages apart: a user message after tool results is its own message', () => {
    const prompt = toSdkPrompt([
      message('assistant', [{ type: 'tool_call', id: 'c1', name: 'add', arguments: '{"a":1,"b":1}' }]),
      message('tool', [result('c1', '2')]),
      message('user', [text('Thanks. Now 3+3?')]),
      message('user', [text('Quickly.')]),
    ]);
    expect(prompt.map((entry) => entry.role)).toEqual(['assistant', 'tool', 'user', 'user']);
  });

  it('sends unparseable or non-object arguments as {} (the tool result already said what was wrong)', () => {
    const prompt = toSdkPrompt([
      message('assistant', [
        { type: 'tool_call', id: 'a', name: 'add', arguments: '{"a": 2,' },
        { type: 'tool_call', id: 'b', name: 'add', arguments: '' },
        { type: 'tool_call', id: 'c', name: 'add', arguments: '[1, 2]' },
      ]),
    ]);
    const inputs =
      prompt[0]?.role === 'assistant' ? prompt[0].content.map((part) => 'input' in part && part.input) : [];
    expect(inputs).toEqual([{}, {}, {}]);
  });

  it('drops empty text and the messages it leaves empty', () => {
    expect(
      toSdkPrompt([
        message('system', [text('')]),
        message('user', [text('Hi')]),
        message('assistant', [text('')]),
        message('assistant', [text(''), { type: 'tool_call', id: 'c', name: 'add', arguments: '{}' }]),
      ]),
    ).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'add', input: {} }] },
    ]);
  });

  it('image media types: from the extension, from a data URL, or the bare "image"', () => {
    const prompt = toSdkPrompt([
      message('user', [
        { type: 'image', url: 'https://cdn.example.com/a/photo.JPG?size=large' },
        { type: 'image', url: `data:image/webp;base64,${PNG_BASE64}` },
        { type: 'image', url: 'https://example.com/render?id=1' },
      ]),
    ]);
    expect(prompt[0]?.role === 'user' && prompt[0].content).toEqual([
      {
        type: 'file',
        mediaType: 'image/jpeg',
        data: { type: 'url', url: new URL('https://cdn.example.com/a/photo.JPG?size=large') },
      },
      { type: 'file', mediaType: 'image/webp', data: { type: 'data', data: PNG_BASE64 } },
      {
        type: 'file',
        mediaType: 'image',
        data: { type: 'url', url: new URL('https://example.com/render?id=1') },
      },
    ]);
  });
});
