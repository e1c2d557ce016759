/** A size from the environment (`name`), a whole number ≥ 1; unset or empty: `fallback`. Refuses anything else. */
export function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number ≥ 1, got "${text}"`);
  return value;
}
