/** Context windows of the kinds' current flagship models, used when the config says nothing. */
export const builtInContextWindows: Readonly<Record<string, number>> = Object.freeze({
  anthropic: 200_000,
  openai: 128_000,
  grok: 131_072,
  gemini: 1_048_576,
});

export interface ContextWindowOptions {
  /** A provider entry: its kind, and its own `context_window` when it has one. */
  provider: { kind: string; context_window?: unknown };
  /** The config's `default_context_windows`, by kind. */
  defaultContextWindows?: Readonly<Record<string, number>>;
}

/**
 * The context window of a provider entry: its explicit `context_window` > `default_context_windows[kind]` >
 * the built-in default for the kind > 0, which means unknown (context checks are off).
 */
export function resolveContextWindow({ provider, defaultContextWindows = {} }: ContextWindowOptions): number {
  const explicit = provider.context_window;
  if (typeof explicit === 'number') return explicit;
  return (
    ownValue(defaultContextWindows, provider.kind) ?? ownValue(builtInContextWindows, provider.kind) ?? 0
  );
}

/** Own keys only: a kind named "constructor" must not find Object.prototype's. */
function ownValue(record: Readonly<Record<string, number>>, key: string): number | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
