import { z } from 'zod';
import { formatPath } from '../schemas/index.js';
import { didYouMean } from './suggest.js';

/**
 * Messages for config problems, written for someone editing YAML: they say what is wrong and what would
 * be right. Passed as the per-parse error map, so a provider kind's own schema gets the same wording.
 */
export const configErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'required';
      const expected = isIntegerSchema(issue.inst) ? 'int' : issue.expected;
      return `expected ${describeExpected(expected)}, got ${describeValue(issue.input)}`;
    }
    case 'too_small':
      return describeBound('at least', issue.origin, issue.minimum, issue.inclusive);
    case 'too_big':
      return describeBound('at most', issue.origin, issue.maximum, issue.inclusive);
    case 'invalid_value':
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return undefined;
  }
};

/** One thing wrong with a config, at a path into the parsed YAML. */
export interface ConfigProblem {
  path: readonly PropertyKey[];
  message: string;
}

/** `agents[1].provider: message`; `(root): message` for the document itself. */
export function formatProblem(problem: ConfigProblem): string {
  return `${problem.path.length === 0 ? '(root)' : formatPath(problem.path)}: ${problem.message}`;
}

/**
 * Turns zod issues into problems. Unknown keys become one problem per key, pointing at the key, with a
 * hint from the keys `schema` allows there.
 */
export function issuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  schema: z.core.$ZodType,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeys(schemaAt(schema, issue.path));
      for (const key of issue.keys) {
        problems.push({ path: [...issue.path, key], message: unknownKeyMessage(key, allowed) });
      }
    } else {
      problems.push({ path: issue.path, message: issue.message });
    }
  }
  return problems;
}

/** Whether a problem is about its key being unknown (its message comes from `unknownKeyMessage`). */
export function isUnknownKeyProblem(problem: ConfigProblem): boolean {
  return problem.message.startsWith('unknown key');
}

export function unknownKeyMessage(key: string, allowed: readonly string[]): string {
  const hint = didYouMean(key, allowed);
  if (hint !== '' || allowed.length === 0) return `unknown key${hint}`;
  return `unknown key (expected one of: ${allowed.join(', ')})`;
}

/** The keys an object schema allows, looking through defaults, optionals and pipes; [] for anything else. */
export function allowedKeys(schema: z.core.$ZodType | undefined): string[] {
  const inner = schema === undefined ? undefined : unwrap(schema);
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
}

function schemaAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): z.core.$ZodType | undefined {
  let current: z.core.$ZodType | undefined = schema;
  for (const segment of path) {
    if (current === undefined) return undefined;
    const inner = unwrap(current);
    if (inner instanceof z.ZodObject) current = inner.shape[String(segment)];
    else if (inner instanceof z.ZodArray) current = inner.element;
    else if (inner instanceof z.ZodRecord) current = inner.valueType;
    else return undefined;
  }
  return current;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (;;) {
    if (
      current instanceof z.ZodDefault ||
      current instanceof z.ZodPrefault ||
      current instanceof z.ZodOptional ||
      current instanceof z.ZodNullable ||
      current instanceof z.ZodLazy
    ) {
      current = current.unwrap();
    } else if (current instanceof z.ZodPipe) {
      // z.preprocess(fn, schema) is a pipe whose input side is the transform: the shape is on the output side.
      current = current.in instanceof z.ZodTransform ? current.out : current.in;
    } else {
      return current;
    }
  }
}

/** z.int() reports a non-number as expecting a "number"; say "integer" there too. */
function isIntegerSchema(schema: unknown): boolean {
  return schema instanceof z.ZodNumberFormat && schema.isInt === true;
}

function describeExpected(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer';
    case 'array':
      return 'a list';
    case 'object':
      return 'a mapping (key: value pairs)';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}

/** How a YAML value reads back to its author. */
export function describeValue(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

function describeBound(
  direction: 'at least' | 'at most',
  origin: string,
  bound: number | bigint | Date,
  inclusive: boolean | undefined,
): string {
  const limit = Number(bound);
  if (origin === 'array') {
    if (direction === 'at least' && limit === 1) return 'must not be empty';
    return `must have ${direction} ${limit} ${limit === 1 ? 'entry' : 'entries'}`;
  }
  if (origin === 'string') {
    if (direction === 'at least' && limit === 1) return 'must not be empty';
    return `must be ${direction} ${limit} characters long`;
  }
  if (inclusive === false) return `must be ${direction === 'at least' ? 'greater' : 'less'} than ${limit}`;
  return `must be ${direction} ${limit}`;
}
