import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';

/** A session's record in Redis (hash field `record`). Version 1. */
export const sessionRecordSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  agent: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.iso.datetime(),
  /** The tenant the session belongs to (decision 0035); a record from before tenants belongs to `default`. */
  tenant: z.string().default('default'),
});
export type SessionRecord = z.infer<typeof sessionRecordSchema>;

defineRecordKind({ name: 'session', version: 1, schema: sessionRecordSchema });
