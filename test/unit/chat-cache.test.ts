import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { extendChat, knownChatLength } from '../../src/redis/chat-cache.js';

function message(id: string): Message {
  return {
    id,
    sender: 'user',
    role: 'user',
    parts: [{ type: 'text', text: id }],
    metadata: {},
    created_at: '',
  };
}

describe('the chat cache of a worker process', () => {
  it('holds what was read and extends it with the entries after it', () => {
    const key = `chat-${Math.random()}`;
    expect(knownChatLength(key)).toBe(0);
    expect(extendChat(key, 0, [message('a'), message('b')], 2)?.map((m) => m.id)).toEqual(['a', 'b']);
    expect(knownChatLength(key)).toBe(2);
    expect(extendChat(key, 2, [message('c')], 3)?.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(extendChat(key, 3, [], 3)?.map((m) => m.id)).toEqual(['a', 'b', 'c']);
  });

  it('drops what it holds when the chat does not fit it, so the caller reads the chat whole', () => {
    const key = `chat-${Math.random()}`;
    extendChat(key, 0, [message('a'), message('b')], 2);
    // A chat shorter than what is held (deleted and created again).
    expect(extendChat(key, 2, [], 1)).toBeUndefined();
    expect(knownChatLength(key)).toBe(0);
    extendChat(key, 0, [message('a')], 1);
    // Read from a position that is not what is held (another step of this process extended it meanwhile).
    expect(extendChat(key, 0, [message('a')], 2)).toBeUndefined();
    expect(knownChatLength(key)).toBe(0);
  });
});
