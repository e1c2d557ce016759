import { createRedactor, type Redactor } from './redactor.js';

/**
 * The secrets this process knows (provider keys and headers, MCP env and headers, API tokens, the Redis
 * password), hidden by value from every log line, recorded error, event and tool result. Process-wide on
 * purpose: a secret must be hidden from a log line written before, or far away from, the code that holds
 * the config, and from the message of an exception nobody expected. Loading a config registers its secrets.
 */
const registered = new Set<string>();
let current: Redactor = (text) => text;

/** Adds secret values to hide from now on (values shorter than 8 characters are ignored). */
export function registerSecrets(values: Iterable<string>): void {
  const before = registered.size;
  for (const value of values) registered.add(value);
  if (registered.size !== before) current = createRedactor(registered);
}

/** The text with every registered secret replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  return current(text);
}

/** A JSON-like value with every registered secret in its strings (and keys) replaced; the same value when none. */
export function redactSecretsIn<T>(value: T): T {
  if (registered.size === 0) return value;
  return redactValue(value) as T;
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return current(value);
  if (Array.isArray(value)) {
    const entries = value.map(redactValue);
    return entries.every((entry, index) => entry === value[index]) ? value : entries;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value);
    const redacted = entries.map(([key, entry]) => [current(key), redactValue(entry)] as const);
    const same = redacted.every(
      ([key, entry], index) => key === entries[index]?.[0] && entry === entries[index]?.[1],
    );
    return same ? value : Object.fromEntries(redacted);
  }
  return value;
}
