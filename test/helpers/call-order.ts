import type { Harness } from './harness.js';

/** The runs in the order of their first model call (the order a worker started them in). */
export function firstCalls(h: Harness): string[] {
  const seen: string[] = [];
  for (const call of h.modelCalls()) if (!seen.includes(call.run_id)) seen.push(call.run_id);
  return seen;
}
