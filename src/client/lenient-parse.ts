import type { z } from 'zod';

/**
 * Parses with the strict schema, except that fields the schema does not know are dropped instead of
 * refused: a newer server may add fields to its answers and events, and an older client must go on
 * reading them. Anything else that does not fit (a missing field, another type, an unknown enum value)
 * still fails.
 */
export function parseLenient<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
): z.ZodSafeParseResult<z.output<Schema>> {
  let current = value;
  // Each pass removes the unknown keys zod reported; a union may report deeper ones only once the outer
  // ones are gone, so a few passes at most.
  for (let pass = 0; pass < 8; pass += 1) {
    const result = schema.safeParse(current);
    if (result.success) return result;
    const unknownKeys = unknownKeysOnly(result.error.issues, []);
    if (unknownKeys === undefined || unknownKeys.length === 0) return result;
    current = structuredClone(current);
    for (const issue of unknownKeys) {
      const holder = valueAt(current, issue.path);
      if (typeof holder !== 'object' || holder === null) return result;
      for (const key of issue.keys) delete (holder as Record<string, unknown>)[key];
    }
  }
  return schema.safeParse(current);
}

interface UnknownKeys {
  path: PropertyKey[];
  keys: string[];
}

/**
 * The unknown keys to drop when they are all that is wrong, else undefined. In a union, a branch that
 * fails only by unknown keys is the one the value meant.
 */
function unknownKeysOnly(
  issues: readonly z.core.$ZodIssue[],
  base: PropertyKey[],
): UnknownKeys[] | undefined {
  const found: UnknownKeys[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === 'unrecognized_keys') found.push({ path, keys: issue.keys });
    else if (issue.code === 'invalid_union') {
      const branch = issue.errors.map((branchIssues) => unknownKeysOnly(branchIssues, path)).find(Boolean);
      if (branch === undefined) return undefined;
      found.push(...branch);
    } else return undefined;
  }
  return found;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
