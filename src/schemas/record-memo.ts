import type { z } from 'zod';
import { parseJsonRecord } from './parse.js';

/**
 * Records of one kind read back as JSON text, held by their text (decision 0055). Parsing is deterministic
 * (the same text, schema and migrations give the same record), so a text this process parsed before is not
 * parsed and validated again; a text that differs in any character is parsed in full.
 *
 * Every text is validated by the schema the first time this process reads it, including a text this process
 * wrote itself (durability rule 12: a record is validated when read, whoever wrote it).
 *
 * The records handed out are frozen, for every reader shares them: a change throws where it is made.
 * Bounded by the characters of text held; the least recently used text goes first. A text longer than a
 * sixteenth of the bound is not held (one would push out many small ones).
 */
export interface RecordMemo<Value> {
  /** parseJsonRecord, or the record held for exactly this text. */
  parse(text: string, where: string): Value;
}

export function recordMemo<Schema extends z.ZodType>(
  schema: Schema,
  maxChars: number,
): RecordMemo<z.output<Schema>> {
  const records = new Map<string, z.output<Schema>>();
  let heldChars = 0;
  const hold = (text: string, record: z.output<Schema>) => {
    if (text.length > maxChars / 16) return;
    if (!records.delete(text)) heldChars += text.length;
    records.set(text, record);
    // A Map iterates in insertion order: the first text is the least recently used.
    for (const [oldest] of records) {
      if (heldChars <= maxChars) break;
      records.delete(oldest);
      heldChars -= oldest.length;
    }
  };
  return {
    parse(text, where) {
      const held = records.get(text);
      const record = held === undefined ? deepFreeze(parseJsonRecord(schema, text, where)) : held;
      hold(text, record);
      return record;
    },
  };
}

function deepFreeze<Value>(value: Value): Value {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const member of Object.values(value)) deepFreeze(member);
  return Object.freeze(value);
}
