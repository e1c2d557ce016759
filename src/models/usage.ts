import { z } from 'zod';

export const usageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cached_input_tokens: z.number().int().nonnegative(),
  requests: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof usageSchema>;

export const zeroUsage: Usage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cached_input_tokens: 0,
  requests: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    requests: a.requests + b.requests,
  };
}
