import type { Message } from '../chat/index.js';

/**
 * The chats this process read last, decoded: a chat only grows (entries are appended, never changed), so
 * an iteration asks Redis only for the entries after the ones held here. Bounded by chat count; the least
 * recently used chat goes first. Messages are shared: never mutate them.
 */
const cacheLimit = 1000;
const chats = new Map<string, readonly Message[]>();

/** How many leading entries of the chat this process holds. */
export function knownChatLength(chatKey: string): number {
  return chats.get(chatKey)?.length ?? 0;
}

/**
 * The whole chat, from the entries held here and the ones read after them. `length` is the chat's length in
 * Redis: when it does not fit what is held (the chat is shorter), what is held is dropped and the caller
 * reads the chat whole. A chat key is never reused (session ids are random, and a deleted session cannot be
 * resumed), so this is a safety net: a reused key whose new chat is at least as long would not be noticed.
 */
export function extendChat(
  chatKey: string,
  from: number,
  read: readonly Message[],
  length: number,
): Message[] | undefined {
  const known = chats.get(chatKey) ?? [];
  if (from !== known.length || from + read.length !== length) {
    chats.delete(chatKey);
    return undefined;
  }
  const chat = read.length === 0 ? [...known] : [...known, ...read];
  chats.delete(chatKey);
  chats.set(chatKey, chat);
  for (const [oldest] of chats) {
    if (chats.size <= cacheLimit) break;
    chats.delete(oldest);
  }
  return chat;
}
