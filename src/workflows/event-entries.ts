import { type RatchetEvent, storedEventSchema } from '../events/event.js';
import { parseRecord } from '../schemas/parse.js';

/** Stream entries ([id, [field, value, ...]]) to events, validated. */
export function parseEntries(entries: readonly [string, string[]][], sessionId: string): RatchetEvent[] {
  return entries.map(([id, fields]) => {
    const text = fields[fields.indexOf('event') + 1] ?? '';
    const event = parseRecord(storedEventSchema, JSON.parse(text), `event ${id} of session ${sessionId}`);
    return { ...(event as RatchetEvent), id };
  });
}
