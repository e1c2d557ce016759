import type { RatchetConfig } from './config-schema.js';

/** `${NAME}`, `${NAME:-default}` and `$NAME` references of a config text (comments included: a superset). */
const referencePattern = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}\n]*)?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

const referencesOf = new WeakMap<RatchetConfig, ReadonlyMap<string, string>>();

/**
 * Remembers, for a config parsed from text, which values came from which environment variables (value →
 * name), so that what is recorded of the config (an agent's definition, decision 0030) names a variable
 * instead of holding its value. A config built in code has none.
 */
export function rememberEnvReferences(config: RatchetConfig, text: string, env: NodeJS.ProcessEnv): void {
  const references = new Map<string, string>();
  for (const match of text.matchAll(referencePattern)) {
    const name = match[1] ?? match[2];
    const value = name === undefined ? undefined : env[name];
    // Short values ("1", "true") would match ordinary text: a value worth hiding is longer.
    if (name !== undefined && value !== undefined && value.length >= 4) references.set(value, name);
  }
  referencesOf.set(config, references);
}

/** The values of a config that came from environment variables, with the variables' names. */
export function envReferencesOf(config: RatchetConfig): ReadonlyMap<string, string> {
  return referencesOf.get(config) ?? new Map();
}
