import type { z } from 'zod';
import { RatchetError } from '../errors/index.js';
import { describeIssues } from './issues.js';
import { migrateRecord, recordKindOf } from './record-kinds.js';

/**
 * The one helper for data crossing a trust boundary that we wrote ourselves (records read back from Redis,
 * job payloads). A record of a declared kind (`defineRecordKind`) written in an older version is migrated
 * first. A record that does not parse fails loudly; it is never replaced by a default.
 */
export function parseRecord<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const kind = recordKindOf(schema);
  const parsed = schema.safeParse(kind ? migrateRecord(kind, value, what) : value);
  if (!parsed.success) {
    throw new RatchetError(
      'record_invalid',
      `${what} does not match its schema: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}

/** parseRecord for JSON text. */
export function parseJsonRecord<Schema extends z.ZodType>(
  schema: Schema,
  text: string,
  what: string,
): z.output<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('record_invalid', `${what} is not valid JSON: ${(error as Error).message}`);
  }
  return parseRecord(schema, value, what);
}
