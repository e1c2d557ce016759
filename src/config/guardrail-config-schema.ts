import { z } from 'zod';
import { integer } from '../schemas/index.js';
import { patternProblem } from './regex-safety.js';

/**
 * A regular expression from the config: it must compile and pass the checks of regex-safety.ts. It is
 * matched without flags (the linear-time engine takes neither `i` nor `u`): write `[Pp]assword` for a
 * case-insensitive match. A pattern written as a `/…/flags` literal is refused with the pattern to write
 * instead (regexLiteralProblem): it would otherwise look for the slashes and never match.
 */
export function safePattern() {
  return z
    .string()
    .min(1)
    .superRefine((source, context) => {
      const problem = patternProblem(source);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    });
}

const jsonTypes = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;
export type JsonSchemaType = (typeof jsonTypes)[number];

/**
 * The subset of JSON Schema an output guardrail checks (docs/effects.md lists it). Keywords outside it are
 * errors at load, so a schema never silently checks less than its author meant.
 */
export interface JsonSchemaSubset {
  type?: JsonSchemaType | JsonSchemaType[] | undefined;
  enum?: unknown[] | undefined;
  const?: unknown;
  properties?: Record<string, JsonSchemaSubset> | undefined;
  required?: string[] | undefined;
  additionalProperties?: boolean | undefined;
  items?: JsonSchemaSubset | undefined;
  minItems?: number | undefined;
  maxItems?: number | undefined;
  minLength?: number | undefined;
  maxLength?: number | undefined;
  pattern?: string | undefined;
  minimum?: number | undefined;
  maximum?: number | undefined;
  title?: string | undefined;
  description?: string | undefined;
}

export const jsonTypeSchema = z.enum(jsonTypes, {
  error: `expected a JSON type (${jsonTypes.join(', ')})`,
});

export const jsonSchemaSubsetSchema: z.ZodType<JsonSchemaSubset> = z.lazy(() =>
  z.strictObject({
    type: z
      .union([jsonTypeSchema, z.array(jsonTypeSchema).min(1)], {
        error: `expected a JSON Schema type (${jsonTypes.join(', ')}) or a list of them`,
      })
      .optional(),
    enum: z.array(z.unknown()).min(1).optional(),
    const: z.unknown().optional(),
    properties: z.record(z.string(), jsonSchemaSubsetSchema).optional(),
    required: z.array(z.string()).optional(),
    additionalProperties: z.boolean().optional(),
    items: jsonSchemaSubsetSchema.optional(),
    minItems: integer(0).optional(),
    maxItems: integer(0).optional(),
    minLength: integer(0).optional(),
    maxLength: integer(0).optional(),
    // JSON Schema means ECMA-262 with Unicode semantics; this subset matches without the `u` flag.
    pattern: safePattern().optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    title: z.string().optional(),
    description: z.string().optional(),
  }),
);

/** A check of a run's final answer (agents[].options.output_guardrail). */
export const outputGuardrailSchema = z
  .strictObject({
    /** The answer fails when any of these matches it. */
    deny: z.array(safePattern()).default([]),
    /** When given, the answer fails unless at least one of these matches it. */
    allow: z.array(safePattern()).default([]),
    /** Longest answer accepted, in characters. */
    max_length: integer(1).optional(),
    /** The answer must be JSON (optionally in one ```json fenced block) valid against this schema. */
    json_schema: jsonSchemaSubsetSchema.optional(),
    /** `fail` ends the run with guardrail_failed; `retry` sends the answer back with the reason. */
    on_fail: z.enum(['fail', 'retry']).default('fail'),
    /** Answers sent back before the run fails (on_fail: retry). */
    max_retries: integer(0, 10).default(2),
  })
  .refine(
    (guardrail) =>
      guardrail.deny.length > 0 ||
      guardrail.allow.length > 0 ||
      guardrail.max_length !== undefined ||
      guardrail.json_schema !== undefined,
    { error: 'give at least one check: deny, allow, max_length or json_schema' },
  );

export type OutputGuardrailConfig = z.output<typeof outputGuardrailSchema>;
