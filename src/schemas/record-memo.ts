import type { z } from 'zod';
import { parseJsonRecord } from './parse.js';

/**
 * Records of one kind read back as JSON text, held by their text (decision 0055). Parsing is deterministic
 * (the same text, schema and migrations give the same record), so a text this process parsed before is not
 * parsed and validated again; a text that differs in any character is parsed in full.
 *
 * A text this process itself just wrote (`wrote`) is held as `JSON.parse` gives it back, without the schema:
 * it was built as a record of this kind by this code. Any other process that reads it validates it.
 *
 * The records handed out are frozen, for every reader shares them: a change throws where it is made.
 * Bounded by the characters of text held; the least recently used text goes first. A text longer than a
 * sixteenth of the bound is not held (one would push out many small ones).
 */
export interface RecordMemo<Value> {
  /** parseJsonRecord, or the record held for exactly this text. */
  parse(text: string, where: string): Value;
  /** The text of a record of this kind this process has just written. */
  wrote(text: string): void;
}

export function recordMemo<Schema extends z.ZodType>(
  schema: Schema,
  maxChars: number,
): RecordMemo<z.output<Schema>> {
  // `written`: a text written here and not read yet, parsed when it is (most are: the last step of a run
  // writes some that nothing here reads again).
  const records = new Map<string, z.output<Schema> | typeof written>();
  let heldChars = 0;
  const hold = (text: string, record: z.output<Schema> | typeof written) => {
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
      const record =
        held === undefined
          ? deepFreeze(parseJsonRecord(schema, text, where))
          : held === written
            ? deepFreeze(JSON.parse(text) as z.output<Schema>)
            : held;
      hold(text, record);
      return record;
    },
    wrote(text) {
      if (!records.has(text)) hold(text, written);
    },
  };
}

const written = Symbol('written here, not parsed yet');

function deepFreeze<Value>(value: Value): Value {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const member of Object.values(value)) deepFreeze(member);
  return Object.freeze(value);
}
