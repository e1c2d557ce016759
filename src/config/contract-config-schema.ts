import { z } from 'zod';
import { duration, integer, maxRunTimeoutS, nullAsMissing } from '../schemas/index.js';
import { registeredKinds } from './config-extensions.js';
import { configErrorMap } from './config-issues.js';
import { contractTemplateNames, contractTemplates } from './contract-templates.js';
import { jsonSchemaSubsetSchema, jsonTypeSchema, safePattern } from './guardrail-config-schema.js';
import { parseOptions, readKindEntry } from './kind-entry.js';
import { didYouMean } from './suggest.js';

const fieldName = z.string().min(1);

/** One built-in rule of a contract's schema: its field, and one check. */
const builtinRuleSchema = z.union(
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
      'expected a rule {field, and one of min_length, max_length, pattern, range: {min, max}, enum: [values]} ' +
      'or a rule kind written in code {kind, field?, params?}',
  },
);

/**
 * A rule kind written in code (`defineContractRule`, registered in `extensions.contractRules`): `{kind,
 * field?, params?}`. Without `field` it is given the whole result; `params` are checked by its own schema.
 */
export interface CodeRuleConfig {
  kind: string;
  field?: string | undefined;
  params: unknown;
}

export type ContractRuleConfig = z.output<typeof builtinRuleSchema> | CodeRuleConfig;

/** What a code rule entry may hold besides its params. */
const codeRuleKeys = ['kind', 'field', 'params'];

/** A rule: a built-in one, or (with `kind`) a kind registered in code. */
const ruleSchema = z.transform((input: unknown, context): ContractRuleConfig => {
  if (typeof input === 'object' && input !== null && !Array.isArray(input) && 'kind' in input) {
    const registered = registeredKinds().contractRules ?? [];
    const entry = readKindEntry(input, context, {
      noun: 'contract rule',
      shape: '{kind, field?, params?}',
      known: registered.map((rule) => rule.kind),
      schemaOf: (kind) => {
        const definition = registered.find((rule) => rule.kind === kind);
        return definition ? (definition.options ?? z.strictObject({})) : undefined;
      },
    });
    if (!entry) return input as CodeRuleConfig;
    const { field, params, ...unknown } = entry.rest;
    for (const key of Object.keys(unknown))
      context.addIssue({
        code: 'custom',
        path: [key],
        message: `unknown key "${key}" of a contract rule written in code${didYouMean(key, codeRuleKeys)}: give {kind, field?, params?}`,
      });
    const fieldParsed = fieldName.optional().safeParse(field);
    if (!fieldParsed.success)
      context.addIssue({
        code: 'custom',
        path: ['field'],
        message: 'expected a field name (a non-empty string)',
      });
    const options = parseOptions(entry.schema, params ?? {}, ['params']);
    for (const issue of options.issues) context.addIssue(issue);
    return { kind: entry.kind, ...(typeof field === 'string' ? { field } : {}), params: options.value };
  }
  const parsed = builtinRuleSchema.safeParse(input, { error: configErrorMap });
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return input as ContractRuleConfig;
});

/** What a result must hold: fields with their types, and rules on them. */
const contractSchemaSchema = z.strictObject({
  /** Fields the result must have, with their types. */
  required: z.record(fieldName, jsonTypeSchema).default({}),
  /** Fields it may have, with their types; any other field is a warning. */
  optional: z.record(fieldName, jsonTypeSchema).default({}),
  rules: z.array(ruleSchema).default([]),
});
type ContractSchema = z.output<typeof contractSchemaSchema>;

/** A schema version: what a result's metadata names (`1`, `2.1`, `2026-12-a`), at most 40 characters. */
export const schemaVersionSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$/, {
  error:
    'expected a schema version: 1 to 40 letters, digits, ".", "_", "+" or "-", starting with a letter or digit (e.g. "1.0")',
});

/**
 * Rules name fields listed in `required` or `optional` (the template's included): a rule on any other field
 * checks a field the contract otherwise warns about, which is a typo far more often than a plan.
 */
function checkRuleFields(
  schema: ContractSchema,
  listed: readonly string[],
  context: { addIssue(issue: { code: 'custom'; path: PropertyKey[]; message: string }): void },
): void {
  schema.rules.forEach((rule, index) => {
    if (rule.field === undefined || listed.includes(rule.field)) return;
    const hint = didYouMean(rule.field, listed);
    context.addIssue({
      code: 'custom',
      path: ['schema', 'rules', index, 'field'],
      message:
        hint !== ''
          ? `field "${rule.field}" is listed neither in required nor in optional${hint}`
          : `field "${rule.field}" is listed neither in required nor in optional: add it to one of them ` +
            `with its type (e.g. optional: { ${rule.field}: string })`,
    });
  });
}

/** A contract's schema with its template's fields and rules added (the contract's own win on a field). */
function withTemplate(
  schema: ContractSchema | undefined,
  template: keyof typeof contractTemplates,
): ContractSchema {
  const base = contractTemplates[template];
  return {
    required: { ...base.required, ...schema?.required },
    optional: { ...base.optional, ...schema?.optional },
    rules: [...(base.rules as readonly ContractRuleConfig[]), ...(schema?.rules ?? [])],
  };
}

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
    /** A built-in template whose fields and rules `schema` adds to (contract-templates.ts). */
    template: z.preprocess(
      nullAsMissing,
      z
        .enum(contractTemplateNames, {
          error: `expected a contract template: ${contractTemplateNames.join(', ')}`,
        })
        .optional(),
    ),
    /** The version of what the contract asks: named in the checked result's metadata. */
    schema_version: z.preprocess(nullAsMissing, schemaVersionSchema.optional()),
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
  .superRefine((contract, context) => {
    const schema = contract.template ? withTemplate(contract.schema, contract.template) : contract.schema;
    if (schema && contract.schema)
      checkRuleFields(
        contract.schema,
        [...Object.keys(schema.required), ...Object.keys(schema.optional)],
        context,
      );
  })
  .transform((contract) =>
    contract.template ? { ...contract, schema: withTemplate(contract.schema, contract.template) } : contract,
  )
  .refine(
    (contract) =>
      contract.schema !== undefined ||
      contract.json_schema !== undefined ||
      contract.required_confidence !== undefined ||
      contract.max_execution_time_ms !== undefined,
    {
      error:
        'give at least one check: template, schema, json_schema, required_confidence or max_execution_time_ms',
    },
  );

export type ContractConfig = z.output<typeof contractConfigSchema>;
