import { z } from 'zod';

/**
 * What a run's result says about itself (src/workflows/core/result-metadata.ts computes it): how long it took,
 * how many iterations and tool calls, tokens and cost. `confidence`, `partial` and `contract` are null until
 * the features that set them (structured answers, supervisors, handoff contracts) exist.
 */
export const resultMetadataSchema = z.strictObject({
  execution_time_ms: z.number().int().nonnegative(),
  iterations: z.number().int().nonnegative(),
  tool_calls: z.strictObject({ count: z.number().int().nonnegative(), names: z.array(z.string()) }),
  tokens: z.strictObject({
    input: z.number().int().nonnegative(),
    output: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
  }),
  cost_usd: z.number().nonnegative(),
  confidence: z.number().nullable(),
  partial: z.strictObject({ reason: z.string() }).nullable(),
  contract: z.unknown().nullable(),
});
export type ResultMetadata = z.infer<typeof resultMetadataSchema>;
