import { z } from 'zod';

export const usageTotalsSchema = z
  .strictObject({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cached_input_tokens: z.number(),
    requests: z.number(),
    cost_usd: z.number(),
  })
  .meta({ id: 'UsageTotals', description: 'Usage summed over runs; cost from the config price table.' });
export type UsageTotals = z.output<typeof usageTotalsSchema>;
