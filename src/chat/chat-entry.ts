import { z } from 'zod';
import { parseJsonRecord } from '../schemas/parse.js';
import { type Message, messageSchema } from './message.js';

/** A chat list entry in Redis. Version 1. */
const chatEntrySchema = z.strictObject({ v: z.literal(1), message: messageSchema });

export function encodeChatEntry(message: Message): string {
  return JSON.stringify({ v: 1, message });
}

export function decodeChatEntry(text: string, where: string): Message {
  return parseJsonRecord(chatEntrySchema, text, where).message;
}
