import { z } from 'zod';

/**
 * A submission's idempotency key (header `Idempotency-Key`, body `idempotency_key`; decision 0035):
 * printable ASCII without spaces, as an HTTP header carries it, and bounded, since it is kept (as a digest).
 */
export const maxIdempotencyKeyChars = 255;

export const idempotencyKeySchema = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(maxIdempotencyKeyChars, { error: `must be at most ${maxIdempotencyKeyChars} characters` })
  .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII characters without spaces' });
