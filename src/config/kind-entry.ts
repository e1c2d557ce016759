import type { z } from 'zod';
import { allowedKeys, configErrorMap, describeValue, unknownKeyMessage } from './config-issues.js';
import { didYouMean } from './suggest.js';

/** A problem of a config entry, at its path relative to the entry (a type, so zod's issue type takes it). */
export type EntryIssue = { code: 'custom'; path: PropertyKey[]; message: string };

/** What a zod transform's context is to these helpers: where problems go. */
interface IssueSink {
  addIssue(issue: EntryIssue): void;
}

/** A `{kind, …}` entry read: its kind, the schema of that kind's options, and the entry's other keys. */
export interface KindEntry {
  kind: string;
  schema: z.ZodType;
  rest: Record<string, unknown>;
}

/**
 * Reads a `{kind, …}` entry of the config (an effect, a coordinator, a middleware): a mapping whose `kind` is
 * one `schemaOf` knows (a built-in or a kind registered in code). Otherwise the problem is reported (at the
 * entry, or at `kind` with a did-you-mean and every known kind) and the result is undefined.
 */
export function readKindEntry(
  input: unknown,
  context: IssueSink,
  what: {
    /** `effect`, `coordinator`, `middleware`: the kind's noun in messages. */
    noun: string;
    /** How the entry is written, for a value that is no mapping: `{kind, params}`. */
    shape: string;
    known: readonly string[];
    schemaOf(kind: string): z.ZodType | undefined;
  },
): KindEntry | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    context.addIssue({
      code: 'custom',
      path: [],
      message: `expected a mapping ${what.shape}, got ${describeValue(input)}`,
    });
    return undefined;
  }
  const { kind, ...rest } = input as Record<string, unknown>;
  const known = what.known.join(', ');
  const article = /^[aeiou]/.test(what.noun) ? 'an' : 'a';
  if (typeof kind !== 'string' || kind === '') {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `expected ${article} ${what.noun} kind (one of: ${known})`,
    });
    return undefined;
  }
  const schema = what.schemaOf(kind);
  if (schema === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `unknown ${what.noun} kind "${kind}"${didYouMean(kind, what.known)}; known kinds: ${known}`,
    });
    return undefined;
  }
  return { kind, schema, rest };
}

/**
 * Options of a kind, parsed by its schema: each problem at its path under `at`, an unknown key (of a strict
 * object schema, or of an object schema that would drop it) named with a hint from the schema's keys and
 * `siblings` (keys written beside the options, such as `kind`).
 */
export function parseOptions(
  schema: z.ZodType,
  value: unknown,
  at: readonly PropertyKey[],
  siblings: readonly string[] = [],
): { value: unknown; issues: EntryIssue[] } {
  const issues: EntryIssue[] = [];
  const allowed = allowedKeys(schema);
  const hint = [...siblings, ...allowed];
  if (allowed.length > 0 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    // A non-strict object schema would drop a misspelt option silently: a config names only known ones.
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        issues.push({ code: 'custom', path: [...at, key], message: unknownKeyMessage(key, hint) });
      }
    }
  }
  const parsed = schema.safeParse(value, { error: configErrorMap });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          if (issue.path.length === 0 && allowed.length > 0) continue; // reported above
          const keys = issue.path.length === 0 ? hint : allowedKeys(schema);
          issues.push({
            code: 'custom',
            path: [...at, ...issue.path, key],
            message: unknownKeyMessage(key, keys),
          });
        }
      } else {
        issues.push({ code: 'custom', path: [...at, ...issue.path], message: issue.message });
      }
    }
  }
  return { value: parsed.success ? parsed.data : value, issues };
}
