import type { z } from 'zod';
import { RatchetError } from '../errors/index.js';
import { describeIssues } from './issues.js';

/**
 * The one helper for data crossing a trust boundary that we wrote ourselves (records read back from Redis,
 * job payloads). A record that does not parse fails loudly; it is never replaced by a default.
 */
export function parseRecord<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
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
