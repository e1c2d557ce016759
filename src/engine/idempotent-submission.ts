import { createHash } from 'node:crypto';
import { RatchetError } from '../errors/index.js';
import { idempotencyKey, idempotencyShard, shardOf } from '../redis/keys.js';
import type { IdempotentWrite } from '../redis/run-writer.js';
import { idempotencyKeySchema, maxIdempotencyKeyChars } from '../schemas/index.js';
import { canonicalJson, newSessionId } from '../workflows/index.js';
import type { StartRunInput } from './engine-options.js';
import type { EngineParts } from './engine-parts.js';

/**
 * Idempotent submission (decision 0035): a key a client sends with a submission is recorded by the same
 * script that writes the run (create-run), in the shard of the session the run is on. For a run that starts
 * a new session, the key's own shard is chosen from the key, and the new session's id drawn until it lies
 * there, so every retry of the submission, from any API process, looks in the same place.
 */

/** The default of `api.idempotency_ttl_s`. */
const defaultIdempotencyTtlS = 86_400;

export function checkIdempotencyKey(key: string): void {
  const checked = idempotencyKeySchema.safeParse(key);
  if (!checked.success) {
    throw new RatchetError(
      'invalid_run_settings',
      `idempotency_key ${checked.error.issues[0]?.message ?? 'is not valid'} (1 to ${maxIdempotencyKeyChars} printable ASCII characters)`,
      { details: { field: 'idempotency_key', limit: maxIdempotencyKeyChars } },
    );
  }
}

/** What a submission asks for, as a digest: the same request gives the same one, whatever its key order. */
export function submissionFingerprint(input: StartRunInput, tenant: string, priority: number): string {
  const asked = {
    input: typeof input.input === 'string' ? [{ type: 'text', text: input.input }] : input.input,
    agent: input.agent ?? null,
    session_id: input.sessionId ?? null,
    // A run on a session keeps the session's metadata: only a new session's counts.
    metadata: input.sessionId === undefined ? (input.metadata ?? {}) : null,
    budget: input.budget ?? null,
    timeout_s: input.timeoutS ?? null,
    max_iterations: input.maxIterations ?? null,
    tenant,
    priority,
  };
  return createHash('sha256')
    .update(canonicalJson(asked) ?? '', 'utf8')
    .digest('hex');
}

/** The session id a new session gets: random, and for an idempotent submission in its key's shard. */
export function newSessionIdFor(parts: EngineParts, tenant: string, key: string | undefined): string {
  if (key === undefined || parts.space.shards === 1) return newSessionId();
  const shard = idempotencyShard(parts.space, tenant, digestOf(key));
  for (;;) {
    const candidate = newSessionId();
    if (shardOf(parts.space, candidate) === shard) return candidate;
  }
}

export function idempotentWrite(
  parts: EngineParts,
  input: { key: string; tenant: string; sessionId: string; newSession: boolean; fingerprint: string },
): IdempotentWrite {
  return {
    key: idempotencyKey(parts.space, {
      shard: shardOf(parts.space, input.sessionId),
      tenant: input.tenant,
      sessionId: input.newSession ? undefined : input.sessionId,
      keyDigest: digestOf(input.key),
    }),
    fingerprint: input.fingerprint,
    ttlS: parts.options.idempotencyTtlS ?? defaultIdempotencyTtlS,
  };
}

export function idempotencyKeyReused(key: string, runId: string): RatchetError {
  return new RatchetError(
    'idempotency_key_reused',
    `idempotency key "${key}" started run ${runId} for a different request: send a new key for a new request`,
    { details: { idempotency_key: key, run_id: runId } },
  );
}

function digestOf(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
