import { describe, expect, it } from 'vitest';
import {
  decodeChatEntry,
  encodeChatEntry,
  type Message,
  messageSchema,
  type Part,
  partSchema,
  textOf,
  toolCallsOf,
  toolResultsOf,
} from '../../src/chat/index.js';
import { RatchetError } from '../../src/errors/index.js';

const createdAt = '2024-05-01T12:00:00.000Z';

function message(parts: Part[], overrides: Partial<Message> = {}): Message {
  return {
    id: 'run_x-i1-a',
    sender: 'assistant_agent',
    role: 'assistant',
    parts,
    metadata: {},
    created_at: createdAt,
    ...overrides,
  };
}

const allParts: Part[] = [
  { type: 'text', text: 'Hello, "world" \u00e9\u{1F600}\n' },
  { type: 'image', url: 'https://example.com/cat.png' },
  { type: 'image', data: 'iVBORw0KGgo=', media_type: 'image/png' },
  { type: 'tool_call', id: 'call_1', name: 'calculate', arguments: '{"expression":"1 + 2"}' },
  { type: 'tool_result', tool_call_id: 'call_1', content: '{"result":3}', is_error: false },
];

describe('message parts', () => {
  it.each(allParts.map((part) => [part.type, part] as const))('a %s part parses to itself', (_type, part) => {
    expect(partSchema.parse(part)).toEqual(part);
  });

  it('rejects an image with both a url and data', () => {
    const part = {
      type: 'image',
      url: 'https://example.com/a.png',
      data: 'iVBORw0KGgo=',
      media_type: 'image/png',
    };
    expect(partSchema.safeParse(part).success).toBe(false);
  });

  it('rejects an image with data but no media type, or a media type that is not an image', () => {
    expect(partSchema.safeParse({ type: 'image', data: 'iVBORw0KGgo=' }).success).toBe(false);
    expect(
      partSchema.safeParse({ type: 'image', data: 'iVBORw0KGgo=', media_type: 'text/plain' }).success,
    ).toBe(false);
  });

  it('rejects image data that is not base64 and a url that is not a url', () => {
    expect(
      partSchema.safeParse({ type: 'image', data: 'not base64!', media_type: 'image/png' }).success,
    ).toBe(false);
    expect(partSchema.safeParse({ type: 'image', url: 'cat.png' }).success).toBe(false);
  });

  it('rejects an extra key on a part', () => {
    expect(partSchema.safeParse({ type: 'text', text: 'hi', extra: 1 }).success).toBe(false);
    expect(
      partSchema.safeParse({
        type: 'tool_result',
        tool_call_id: 'c',
        content: '',
        is_error: false,
        name: 'x',
      }).success,
    ).toBe(false);
  });

  it('rejects a tool call or result without an id and an unknown part type', () => {
    expect(partSchema.safeParse({ type: 'tool_call', id: '', name: 'x', arguments: '{}' }).success).toBe(
      false,
    );
    expect(
      partSchema.safeParse({ type: 'tool_result', tool_call_id: '', content: '', is_error: true }).success,
    ).toBe(false);
    expect(partSchema.safeParse({ type: 'audio', data: 'AAAA' }).success).toBe(false);
  });
});

describe('messageSchema', () => {
  const full = message(allParts, { metadata: { iteration: 3, nested: { list: [1, 'two', null] } } });

  it('parses a message of every part type', () => {
    expect(messageSchema.parse(full)).toEqual(full);
  });

  it.each([
    ['text', message([{ type: 'text', text: 'just text' }])],
    ['image url', message([{ type: 'image', url: 'https://example.com/x.jpg?size=2' }], { role: 'user' })],
    ['image data', message([{ type: 'image', data: 'R0lGODlhAQABAAAAACw=', media_type: 'image/gif' }])],
    ['tool_call', message([{ type: 'tool_call', id: 'c1', name: 'word_count', arguments: '' }])],
    [
      'tool_result',
      message([{ type: 'tool_result', tool_call_id: 'c1', content: 'boom', is_error: true }], {
        role: 'tool',
      }),
    ],
    ['metadata', message([], { metadata: { a: 1, b: 'x', c: [true, { d: null }] } })],
    ['everything', full],
  ])('JSON round trip of a message with %s is exact', (_what, original) => {
    const text = JSON.stringify(original);
    const parsed = messageSchema.parse(JSON.parse(text));
    expect(parsed).toStrictEqual(original);
    expect(JSON.stringify(parsed)).toBe(text);
  });

  it('rejects an unknown role', () => {
    expect(messageSchema.safeParse({ ...full, role: 'robot' }).success).toBe(false);
  });

  it('rejects an extra key', () => {
    expect(messageSchema.safeParse({ ...full, name: 'x' }).success).toBe(false);
  });

  it('rejects a created_at that is not an ISO date-time', () => {
    expect(messageSchema.safeParse({ ...full, created_at: 'yesterday' }).success).toBe(false);
    expect(messageSchema.safeParse({ ...full, created_at: '2024-05-01' }).success).toBe(false);
    expect(messageSchema.safeParse({ ...full, created_at: 1714564800000 }).success).toBe(false);
  });

  it('rejects a message without id or metadata', () => {
    expect(messageSchema.safeParse({ ...full, id: '' }).success).toBe(false);
    const { metadata: _metadata, ...withoutMetadata } = full;
    expect(messageSchema.safeParse(withoutMetadata).success).toBe(false);
  });
});

describe('textOf / toolCallsOf / toolResultsOf', () => {
  const mixed = message([
    { type: 'text', text: 'first' },
    { type: 'tool_call', id: 'a', name: 'one', arguments: '{}' },
    { type: 'image', url: 'https://example.com/i.png' },
    { type: 'tool_result', tool_call_id: 'z', content: 'r', is_error: false },
    { type: 'text', text: 'second' },
    { type: 'tool_call', id: 'b', name: 'two', arguments: '{"x":1}' },
  ]);

  it('textOf joins the text parts with newlines, in order', () => {
    expect(textOf(mixed)).toBe('first\nsecond');
    expect(textOf(message([]))).toBe('');
  });

  it('toolCallsOf returns the tool calls in order', () => {
    expect(toolCallsOf(mixed).map((call) => call.id)).toEqual(['a', 'b']);
    expect(toolCallsOf(message([{ type: 'text', text: 'x' }]))).toEqual([]);
  });

  it('toolResultsOf returns the tool results', () => {
    expect(toolResultsOf(mixed)).toEqual([
      { type: 'tool_result', tool_call_id: 'z', content: 'r', is_error: false },
    ]);
  });
});

describe('chat entries', () => {
  const original = message(allParts, { metadata: { iteration: 1 } });

  it('encode then decode gives the message back', () => {
    expect(decodeChatEntry(encodeChatEntry(original), 'chat entry 0')).toStrictEqual(original);
  });

  it('an entry is versioned', () => {
    expect(JSON.parse(encodeChatEntry(original))).toEqual({ v: 1, message: original });
  });

  function decodeError(text: string): RatchetError {
    try {
      decodeChatEntry(text, 'chat entry 7 of some:chat');
    } catch (error) {
      expect(error).toBeInstanceOf(RatchetError);
      return error as RatchetError;
    }
    throw new Error('decodeChatEntry accepted a bad entry');
  }

  it('a bad entry throws record_invalid naming the place and the field', () => {
    const bad = JSON.stringify({ v: 1, message: { ...original, role: 'robot' } });
    const error = decodeError(bad);
    expect(error.code).toBe('record_invalid');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('chat entry 7 of some:chat');
    expect(error.message).toContain('message.role');
  });

  it('an entry of another version or not JSON is rejected', () => {
    // Written by a newer Ratchet (decision 0032): retried, so a worker of that version takes the step.
    expect(decodeError(JSON.stringify({ v: 2, message: original })).code).toBe('record_too_new');
    expect(decodeError(JSON.stringify({ v: 0, message: original })).code).toBe('record_invalid');
    const notJson = decodeError('{"v":1,');
    expect(notJson.code).toBe('record_invalid');
    expect(notJson.message).toContain('chat entry 7 of some:chat is not valid JSON');
  });
});
