/**
 * JSON text of a value with every object's keys sorted: two values with the same content give the same text,
 * whatever their key order. Undefined when the value cannot be written (nested deeper than the stack allows:
 * model-produced JSON may be built to be): callers treat that as "not the same".
 */
export function canonicalJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(sortKeys(value));
  } catch {
    return undefined;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
