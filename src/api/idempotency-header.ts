import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { idempotencyKeySchema } from '../schemas/index.js';
import { ApiError } from './api-error.js';
import { describeValidationIssues } from './validation-issues.js';

/** The header that makes a submission idempotent (decision 0035), and the one that marks a replayed answer. */
export const idempotencyKeyHeader = 'idempotency-key';
export const idempotentReplayedHeader = 'idempotent-replayed';

/** The submission routes' headers, as OpenAPI shows them (checked by idempotencyKeyOf, with the body's). */
export const idempotencyHeadersSchema = z.looseObject({
  [idempotencyKeyHeader]: z
    .string()
    .optional()
    .describe(
      'Makes the submission idempotent (printable ASCII, at most 255 characters): the same key within api.idempotency_ttl_s answers 200 with the run it first started (header Idempotent-Replayed: true); with a different request, 422.',
    ),
});

/**
 * The idempotency key of a submission: its `Idempotency-Key` header or its body's `idempotency_key`; both
 * may be given only alike. A header that is not a valid key is a 400 naming it.
 */
export function idempotencyKeyOf(request: FastifyRequest, bodyKey: string | undefined): string | undefined {
  const header = request.headers[idempotencyKeyHeader];
  if (header === undefined) return bodyKey;
  const refuse = (message: string) => {
    const issue = { location: 'headers', path: idempotencyKeyHeader, message };
    return new ApiError('invalid_request', describeValidationIssues([issue]), { issues: [issue] });
  };
  if (typeof header !== 'string') throw refuse('give the header once');
  const parsed = idempotencyKeySchema.safeParse(header);
  if (!parsed.success) throw refuse(parsed.error.issues[0]?.message ?? 'is not a valid key');
  if (bodyKey !== undefined && bodyKey !== header) {
    throw refuse("differs from the body's idempotency_key: give one of them, or both alike");
  }
  return header;
}

/** Answers a submission: 202 for a new run; 200 with `Idempotent-Replayed: true` for a replay. */
export function sendSubmitted<T extends { replayed?: boolean }>(reply: FastifyReply, accepted: T) {
  if (accepted.replayed === true)
    return reply.status(200).header(idempotentReplayedHeader, 'true').send(accepted);
  return reply.status(202).send(accepted);
}
