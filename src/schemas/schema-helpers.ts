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

/**
 * A duration setting: a whole number from `minimum` to `maximum`, the upper limit stated in its error in
 * words too (`limit`: "1 hour"). Every duration has one, so no setting overflows a timer or a date.
 */
export function duration(minimum: number, maximum: number, limit: string) {
  return integer(minimum).max(maximum, { error: `must be at most ${maximum} (${limit})` });
}
