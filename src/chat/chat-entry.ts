import { z } from 'zod';
import { RatchetError } from '../errors/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
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
 * Every iteration reads its whole chat, so most entries it decodes were decoded by an earlier step of this
 * process: identical text decodes to the identical message. Least recently used entries go first once the
 * memo holds more than `memoMaxBytes` of entry text. Decoded messages are shared: never mutate them.
 */
const memoMaxBytes = 32 * 1024 * 1024;
const memo = new Map<string, Message>();
let memoBytes = 0;

/** Chat entries read from position `from` of the chat `where` names. */
export function decodeChatEntries(entries: readonly string[], where: string, from = 0): Message[] {
  return entries.map((entry, offset) => decodeChatEntry(entry, `chat entry ${from + offset} of ${where}`));
}

export function decodeChatEntry(text: string, where: string): Message {
  const known = memo.get(text);
  if (known) {
    memo.delete(text);
    memo.set(text, known);
    return known;
  }
  const message = parseJsonRecord(chatEntrySchema, text, where).message;
  if (text.length <= memoMaxBytes / 16) {
    memo.set(text, message);
    memoBytes += text.length;
    for (const [oldest] of memo) {
      if (memoBytes <= memoMaxBytes) break;
      memo.delete(oldest);
      memoBytes -= oldest.length;
    }
  }
  return message;
}

defineRecordKind({ name: 'chat.entry', version: 1, schema: chatEntrySchema });
