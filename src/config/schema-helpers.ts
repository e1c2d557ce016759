import { z } from 'zod';

/**
 * A section or field that may be left out, or left empty in YAML (`worker:` with every line below it
 * commented out parses as null): both mean "use the defaults".
 */
export function withDefault<T extends z.ZodType>(schema: T, defaultValue: z.input<T>) {
  return z.preprocess(nullAsMissing, schema.prefault(defaultValue));
}

export function nullAsMissing(value: unknown): unknown {
  return value === null ? undefined : value;
}

export function integer(minimum: number, maximum?: number) {
  const atLeast = z.int().min(minimum);
  return maximum === undefined ? atLeast : atLeast.max(maximum);
}
