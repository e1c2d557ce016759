import type { Usage } from './usage.js';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Cached input tokens; the input price when not given. */
  cached_input?: number | undefined;
}

/** What one request cost: uncached input, cached input and output at their prices. */
export function costOf(usage: Usage, price: Price | undefined): number {
  if (!price) return 0;
  const cached = Math.min(usage.cached_input_tokens, usage.input_tokens);
  const uncached = usage.input_tokens - cached;
  const dollars =
    uncached * price.input +
    cached * (price.cached_input ?? price.input) +
    usage.output_tokens * price.output;
  return dollars / 1_000_000;
}
