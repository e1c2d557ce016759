import type { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Completer } from './completer.js';

/** The fields every provider entry has; the rest are the kind's own. */
export interface BaseProviderConfig {
  name: string;
  kind: string;
  model: string;
  /**
   * The most characters a reply may hold, text and tool arguments together (default 1,000,000); the engine
   * fails a longer one with reply_too_large, and a kind should stop reading it as soon as it is over.
   */
  max_reply_chars?: number;
  /** Shared limits, applied by the engine before each request (see src/redis/rate-limiter.ts). */
  rate_limit?: {
    rpm: number;
    input_tpm: number;
    output_tpm: number;
    max_retries?: number | undefined;
    base_delay_ms?: number | undefined;
    window_ms: number;
  };
}

export interface ProviderFactoryContext {
  /** Directory of the config file: relative paths in provider fields resolve against it. */
  configDir: string;
  logger: Logger;
}

export interface ProviderKind<Fields extends object = object> {
  /** Validates the kind's own fields (everything but name, kind and model); strict: unknown keys are errors. */
  fieldsSchema: z.ZodType<Fields>;
  create(config: BaseProviderConfig & Fields, context: ProviderFactoryContext): Completer;
}

const kinds = new Map<string, ProviderKind>();

/** Registers a provider kind; later registrations of the same kind replace earlier ones. */
export function registerProvider<Fields extends object>(
  kind: string,
  definition: ProviderKind<Fields>,
): void {
  kinds.set(kind, definition as unknown as ProviderKind);
}

export function providerKind(kind: string): ProviderKind | undefined {
  return kinds.get(kind);
}

export function knownProviderKinds(): string[] {
  return [...kinds.keys()].sort();
}
