import { z } from 'zod';
import { RatchetError } from '../errors/index.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { recordMemo } from '../schemas/record-memo.js';
import { type Message, messageSchema } from './message.js';

/** A chat list entry in Redis. Version 1. */
const chatEntrySchema = z.strictObject({ v: z.literal(1), message: messageSchema });

/**
 * The most characters of content one chat entry may hold (text, tool arguments, tool results, inline image
 * data): above the longest reply a provider may be allowed (max_reply_chars, at most 16,000,000), so only
 * something no limit bounded reaches it. Refused, never stored: every later request would carry it.
 */
export const maxChatEntryChars = 20_000_000;

export function encodeChatEntry(message: Message): string {
  const chars = contentChars(message);
  if (chars > maxChatEntryChars) {
    throw new RatchetError(
      'entry_too_large',
      `chat entry ${message.id} (${message.role}, from ${message.sender}) holds ${chars} characters, over the ` +
        `${maxChatEntryChars} a chat entry may hold: it was not stored`,
    );
  }
  return JSON.stringify({ v: 1, message });
}

function contentChars(message: Message): number {
  let chars = 0;
  for (const part of message.parts) {
    if (part.type === 'text') chars += part.text.length;
    else if (part.type === 'tool_call') chars += part.name.length + part.arguments.length;
    else if (part.type === 'tool_result') chars += part.content.length;
    else chars += (part.data ?? part.url ?? '').length;
  }
  return chars;
}

/**
 * The entries this process has decoded, by their text (decision 0055), each validated at its first read here.
 * Decoded messages are shared and frozen.
 */
const entries = recordMemo(chatEntrySchema, 32 * 1024 * 1024);

/** Chat entries read from position `from` of the chat `where` names. */
export function decodeChatEntries(texts: readonly string[], where: string, from = 0): Message[] {
  return texts.map((text, offset) => decodeChatEntry(text, `chat entry ${from + offset} of ${where}`));
}

export function decodeChatEntry(text: string, where: string): Message {
  return entries.parse(text, where).message;
}

defineRecordKind({ name: 'chat.entry', version: 1, schema: chatEntrySchema });
