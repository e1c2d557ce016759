import { z } from 'zod';
import { duration, integer, maxRunTimeoutS, nullAsMissing } from '../schemas/index.js';
import { jsonSchemaSubsetSchema, jsonTypeSchema, safePattern } from './guardrail-config-schema.js';
import { didYouMean } from './suggest.js';

const fieldName = z.string().min(1);

/** One rule of a contract's schema: its field, and one check. */
const ruleSchema = z.union(
  [
    z.strictObject({ field: fieldName, min_length: integer(0) }),
    z.strictObject({ field: fieldName, max_length: integer(0) }),
    z.strictObject({ field: fieldName, pattern: safePattern() }),
    z.strictObject({
      field: fieldName,
      range: z
        .strictObject({ min: z.number().optional(), max: z.number().optional() })
        .refine((range) => range.min !== undefined || range.max !== undefined, {
          error: 'give min, max or both',
        })
        // An empty range would fail every result, whatever the agent answers.
        .superRefine((range, context) => {
          if (range.min !== undefined && range.max !== undefined && range.min > range.max)
            context.addIssue({
              code: 'custom',
              path: ['max'],
              message: `max (${range.max}) is less than min (${range.min}), so no value is in range: swap them`,
            });
        }),
    }),
    z.strictObject({
      field: fieldName,
      enum: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1),
    }),
  ],
  {
    error:
      'expected a rule {field, and one of min_length, max_length, pattern, range: {min, max}, enum: [values]}',
  },
);

/**
 * What a result must hold: fields with their types, and rules on them. A rule names a field listed in
 * `required` or `optional`: a rule on any other field checks a field the contract otherwise warns about,
 * which is a typo far more often than a plan.
 */
const contractSchemaSchema = z
  .strictObject({
    /** Fields the result must have, with their types. */
    required: z.record(fieldName, jsonTypeSchema).default({}),
    /** Fields it may have, with their types; any other field is a warning. */
    optional: z.record(fieldName, jsonTypeSchema).default({}),
    rules: z.array(ruleSchema).default([]),
  })
  .superRefine((schema, context) => {
    const listed = [...Object.keys(schema.required), ...Object.keys(schema.optional)];
    schema.rules.forEach((rule, index) => {
      if (listed.includes(rule.field)) return;
      const hint = didYouMean(rule.field, listed);
      context.addIssue({
        code: 'custom',
        path: ['rules', index, 'field'],
        message:
          hint !== ''
            ? `field "${rule.field}" is listed neither in required nor in optional${hint}`
            : `field "${rule.field}" is listed neither in required nor in optional: add it to one of them ` +
              `with its type (e.g. optional: { ${rule.field}: string })`,
      });
    });
  });

/**
 * A handoff contract (`contracts:`): what a run of `from_agent` must hand to `to_agent` (the agent that
 * delegated to it), or, without `to_agent`, what it must answer as a session's own run (no parent).
 */
export const contractConfigSchema = z
  .strictObject({
    /** How errors and the run record name it; default `<from_agent>-><to_agent or output>`. */
    name: z.preprocess(nullAsMissing, z.string().min(1).optional()),
    from_agent: z.string().min(1),
    to_agent: z.preprocess(nullAsMissing, z.string().min(1).optional()),
    /** The result is a JSON object (optionally one ```json block) with these fields and rules. */
    schema: z.preprocess(nullAsMissing, contractSchemaSchema.optional()),
    /** Or (and) a JSON Schema the result must match. */
    json_schema: z.preprocess(nullAsMissing, jsonSchemaSubsetSchema.optional()),
    /** The result's `confidence` field (0..1) must be at least this. */
    required_confidence: z.preprocess(nullAsMissing, z.number().min(0).max(1).optional()),
    /** The run must have taken at most this long. */
    max_execution_time_ms: z.preprocess(
      nullAsMissing,
      duration(1, maxRunTimeoutS * 1000, '365 days').optional(),
    ),
  })
  .refine(
    (contract) =>
      contract.schema !== undefined ||
      contract.json_schema !== undefined ||
      contract.required_confidence !== undefined ||
      contract.max_execution_time_ms !== undefined,
    { error: 'give at least one check: schema, json_schema, required_confidence or max_execution_time_ms' },
  );

export type ContractConfig = z.output<typeof contractConfigSchema>;
