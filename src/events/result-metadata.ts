import { z } from 'zod';

/** One way a result breaks its contract. */
const contractErrorSchema = z.strictObject({
  field: z.string(),
  error_type: z.string(),
  message: z.string(),
});
export type ContractError = z.infer<typeof contractErrorSchema>;

/** A result checked against its handoff contract (`contracts:`). */
export const contractResultSchema = z.strictObject({
  /** The contract's name (or `<from_agent>-><to_agent>`). */
  contract: z.string(),
  valid: z.boolean(),
  errors: z.array(contractErrorSchema),
  warnings: z.array(z.string()),
  /** The contract's `schema_version` as the run's recorded definition had it; null: it names none. */
  schema_version: z.string().nullable().default(null),
  /** What each of its rules written in code decided (absent: it has none), recorded once (decision 0042). */
  rules: z
    .array(z.strictObject({ kind: z.string(), field: z.string().nullable(), valid: z.boolean() }))
    .optional(),
});
export type ContractResult = z.infer<typeof contractResultSchema>;

/**
 * What a run's result says about itself (src/workflows/core/result-metadata.ts computes it): how long it took,
 * how many iterations and tool calls, tokens and cost; the confidence its answer states, why it is partial, and
 * its handoff contract's verdict (each null when it does not apply).
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
  contract: contractResultSchema.nullable(),
  /** Named intermediate results the run reported (`report_progress` with `data`); {} when none. */
  partial_results: z.record(z.string(), z.json()).default({}),
  /**
   * The version of the schema the result was checked against: its contract's `schema_version`, else its
   * agent's `options.output_schema_version` (both as the run's recorded definition had them); else null.
   */
  schema_version: z.string().nullable().default(null),
});
export type ResultMetadata = z.infer<typeof resultMetadataSchema>;
