import type { BenchConfigOptions } from './bench-config.js';

/** Iterations of each scaling run: `iterations - 1` call the `calculate` tool, then a final answer. */
export const scalingIterations = 5;
/** Steps each worker process runs at once: low, so a 50 ms model makes the measurement concurrency-bound. */
export const scalingConcurrency = 5;

/** The config of the scaling measurement, the same in the bench and in every worker process it starts. */
export function scalingConfigOptions(options: {
  url: string;
  /** A Redis Cluster's seed nodes, to run there instead of on `url`. */
  clusterNodes?: readonly string[] | undefined;
  prefix: string;
  delayMs: number;
}): BenchConfigOptions {
  const delay = options.delayMs > 0 ? { delay_ms: options.delayMs } : {};
  return {
    url: options.url,
    ...(options.clusterNodes ? { clusterNodes: options.clusterNodes } : {}),
    prefix: options.prefix,
    providerKind: 'scripted',
    replies: [
      ...Array.from({ length: scalingIterations - 1 }, (_, index) => ({
        tool_calls: [{ name: 'calculate', arguments: { expression: `${index} + 1` } }],
        ...delay,
      })),
      { text: 'done', ...delay },
    ],
    toolboxes: ['utils'],
    maxIterations: scalingIterations,
    concurrency: scalingConcurrency,
  };
}
