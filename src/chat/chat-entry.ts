import { z } from 'zod';
import { parseJsonRecord } from '../schemas/parse.js';
import { type Message, messageSchema } from './message.js';

/** A chat list entry in Redis. Version 1. */
const chatEntrySchema = z.strictObject({ v: z.literal(1), message: messageSchema });

export function encodeChatEntry(message: Message): string {
  return JSON.stringify({ v: 1, message });
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
