import {
  compileSafePattern,
  hasLinearRegExpEngine,
  type JsonSchemaSubset,
  type JsonSchemaType,
  type OutputGuardrailConfig,
} from '../../config/index.js';

/**
 * The output guardrail: a check of a run's final answer against the agent's `options.output_guardrail`,
 * and what follows from its verdict. Pure and bounded: the answer is model output (hostile). The patterns
 * come from the config and run on V8's linear-time engine (config/regex-safety.ts), and no pattern runs over
 * more than regexInputLimit characters: an answer longer than that fails closed when a pattern would have
 * to read it.
 */

/**
 * The longest text a deny, allow or JSON Schema pattern is run against: linear matching of 50,000
 * characters takes well under 100 ms a pattern; without the linear engine, a lower limit keeps polynomial patterns short.
 */
export function regexInputLimit(): number {
  return hasLinearRegExpEngine() ? 50_000 : 10_000;
}
/** The longest answer parsed as JSON for a json_schema check. */
export const jsonInputLimit = 1_000_000;
/** The longest JSON Schema error path shown in a reason. */
const reasonValueLimit = 80;

export type GuardrailResult =
  | { ok: true }
  | {
      ok: false;
      reason: string;
      /** The check that failed when not the guardrail itself (options.output_schema): its name and retries. */
      by?: { name: string; on_fail: 'fail' | 'retry'; max_retries: number };
    };

/** The checks of one guardrail, compiled once. */
export function createOutputCheck(config: OutputGuardrailConfig): (answer: string) => GuardrailResult {
  const deny = config.deny.map((source) => ({ source, pattern: compileSafePattern(source) }));
  const allow = config.allow.map((source) => ({ source, pattern: compileSafePattern(source) }));
  const limit = regexInputLimit();
  const schemaPatterns = new Map<string, RegExp>();
  return (answer) => {
    if (config.max_length !== undefined && answer.length > config.max_length) {
      return fail(`the answer is ${answer.length} characters long, over the limit of ${config.max_length}`);
    }
    if (deny.length > 0 || allow.length > 0) {
      if (answer.length > limit) {
        return fail(
          `the answer is ${answer.length} characters long, too long to check against the patterns ` +
            `(at most ${limit})`,
        );
      }
      const denied = deny.find(({ pattern }) => pattern.test(answer));
      if (denied) return fail(`the answer matches the denied pattern /${denied.source}/`);
      if (allow.length > 0 && !allow.some(({ pattern }) => pattern.test(answer))) {
        return fail(
          `the answer matches none of the allowed patterns (${allow.map(({ source }) => `/${source}/`).join(', ')})`,
        );
      }
    }
    if (config.json_schema !== undefined) {
      const parsed = answerJson(answer);
      if (!parsed.ok) return fail(parsed.reason);
      const problem = schemaProblem(config.json_schema, parsed.value, '$', {
        patterns: schemaPatterns,
        limit,
      });
      if (problem !== undefined) return fail(`the answer does not match the JSON Schema: ${problem}`);
    }
    return { ok: true };
  };
}

/** Compiled JSON Schema patterns, and the longest string they are run against. */
export interface SchemaRegex {
  patterns: Map<string, RegExp>;
  limit: number;
}

function fail(reason: string): GuardrailResult {
  return { ok: false, reason };
}

/**
 * The JSON value of an answer (optionally one ```json block), parsed only when it is at most jsonInputLimit
 * characters long; else why it has none.
 */
export function answerJson(
  answer: string,
): { ok: true; value: unknown } | { ok: false; why: 'too_long' | 'invalid_json'; reason: string } {
  if (answer.length > jsonInputLimit) {
    return {
      ok: false,
      why: 'too_long',
      reason: `the answer is ${answer.length} characters long, too long to parse as JSON (at most ${jsonInputLimit})`,
    };
  }
  try {
    return { ok: true, value: JSON.parse(withoutFence(answer)) };
  } catch (error) {
    return {
      ok: false,
      why: 'invalid_json',
      reason: `the answer is not valid JSON: ${(error as Error).message}`,
    };
  }
}

/** The JSON inside an answer that is one fenced block (```json ... ```), else the answer itself. */
function withoutFence(answer: string): string {
  const trimmed = answer.trim();
  if (!trimmed.startsWith('```') || !trimmed.endsWith('```') || trimmed.length < 6) return trimmed;
  const firstLineEnd = trimmed.indexOf('\n');
  if (firstLineEnd < 0) return trimmed;
  const language = trimmed.slice(3, firstLineEnd).trim();
  if (language !== '' && language.toLowerCase() !== 'json') return trimmed;
  return trimmed.slice(firstLineEnd + 1, -3);
}

/**
 * The first way `value` breaks `schema` (a JSON path and what is wrong), or undefined. The recursion follows
 * the schema, not the value, so its depth is bounded by the config.
 */
export function schemaProblem(
  schema: JsonSchemaSubset,
  value: unknown,
  path: string,
  regex: SchemaRegex,
): string | undefined {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      return `${path}: expected ${types.join(' or ')}, got ${typeName(value)}`;
    }
  }
  if (schema.const !== undefined && !jsonEqual(schema.const, value)) {
    return `${path}: must be ${shown(schema.const)}`;
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => jsonEqual(option, value))) {
    return `${path}: must be one of ${schema.enum.map(shown).join(', ')}`;
  }
  if (typeof value === 'string') return stringProblem(schema, value, path, regex);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      return `${path}: must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum)
      return `${path}: must be at most ${schema.maximum}`;
    return undefined;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      return `${path}: must have at least ${schema.minItems} items`;
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      return `${path}: must have at most ${schema.maxItems} items`;
    }
    if (schema.items !== undefined) {
      for (let index = 0; index < value.length; index++) {
        const problem = schemaProblem(schema.items, value[index], `${path}[${index}]`, regex);
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null)
    return objectProblem(schema, value as Record<string, unknown>, path, regex);
  return undefined;
}

function stringProblem(
  schema: JsonSchemaSubset,
  value: string,
  path: string,
  regex: SchemaRegex,
): string | undefined {
  // JSON Schema counts code points, not UTF-16 units; the lengths are only counted when a bound is set.
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    const length = codePointLength(value);
    if (schema.minLength !== undefined && length < schema.minLength) {
      return `${path}: must be at least ${schema.minLength} characters long`;
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      return `${path}: must be at most ${schema.maxLength} characters long`;
    }
  }
  if (schema.pattern !== undefined) {
    if (value.length > regex.limit) {
      return `${path}: too long (${value.length} characters) to check against its pattern (at most ${regex.limit})`;
    }
    let pattern = regex.patterns.get(schema.pattern);
    if (pattern === undefined) {
      pattern = compileSafePattern(schema.pattern);
      regex.patterns.set(schema.pattern, pattern);
    }
    if (!pattern.test(value)) return `${path}: must match the pattern /${schema.pattern}/`;
  }
  return undefined;
}

function objectProblem(
  schema: JsonSchemaSubset,
  value: Record<string, unknown>,
  path: string,
  regex: SchemaRegex,
): string | undefined {
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key)) return `${path}: the property "${key}" is required`;
  }
  const properties = schema.properties ?? {};
  for (const [key, propertySchema] of Object.entries(properties)) {
    if (!Object.hasOwn(value, key)) continue;
    const problem = schemaProblem(propertySchema, value[key], `${path}.${key}`, regex);
    if (problem !== undefined) return problem;
  }
  if (schema.additionalProperties === false) {
    const extra = Object.keys(value).find((key) => !Object.hasOwn(properties, key));
    if (extra !== undefined) return `${path}: the property "${shortened(extra)}" is not allowed`;
  }
  return undefined;
}

export function hasType(value: unknown, type: JsonSchemaType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

/** Equality of JSON values (key order aside), as `enum` and `const` compare. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  }
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  return (
    aKeys.length === Object.keys(b).length &&
    aKeys.every(
      (key) => Object.hasOwn(bRecord, key) && jsonEqual((a as Record<string, unknown>)[key], bRecord[key]),
    )
  );
}

function shown(value: unknown): string {
  return shortened(JSON.stringify(value) ?? String(value));
}

function shortened(text: string): string {
  return text.length > reasonValueLimit ? `${text.slice(0, reasonValueLimit)}…` : text;
}

/** What follows a checked final answer. */
export type GuardrailVerdict =
  | { kind: 'accept' }
  | { kind: 'retry'; feedback: string; retry: number }
  | { kind: 'fail'; code: 'guardrail_failed'; message: string };

/**
 * The verdict on a final answer: accepted; sent back to the model with the reason (on_fail: retry, while
 * fewer than max_retries were sent back); or the run fails with guardrail_failed. `retriesSoFar` is how
 * many answers of this run were sent back already (recorded by the caller).
 */
export function guardrailVerdict(
  config: Pick<OutputGuardrailConfig, 'on_fail' | 'max_retries'>,
  result: GuardrailResult,
  retriesSoFar: number,
): GuardrailVerdict {
  if (result.ok) return { kind: 'accept' };
  if (result.by) config = result.by;
  const name = result.by?.name ?? 'the output guardrail';
  if (config.on_fail === 'retry' && retriesSoFar < config.max_retries) {
    return {
      kind: 'retry',
      retry: retriesSoFar + 1,
      feedback:
        `Your answer was not accepted: ${result.reason}. Answer again, correcting this ` +
        `(attempt ${retriesSoFar + 2} of ${config.max_retries + 1}).`,
    };
  }
  const after =
    config.on_fail === 'retry' ? ` after ${retriesSoFar} ${retriesSoFar === 1 ? 'retry' : 'retries'}` : '';
  return {
    kind: 'fail',
    code: 'guardrail_failed',
    message: `the final answer failed ${name}${after}: ${result.reason}`,
  };
}
