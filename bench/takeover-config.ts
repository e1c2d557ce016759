import type { BenchConfigOptions } from './bench-config.js';

/** The takeover measurement's config; the killed worker and the one that takes over differ only in the delay. */
export function takeoverConfigOptions(options: {
  url: string;
  prefix: string;
  replyDelayMs: number;
}): BenchConfigOptions {
  return {
    url: options.url,
    prefix: options.prefix,
    providerKind: 'scripted',
    replies: [{ text: 'done', delay_ms: options.replyDelayMs }],
    toolboxes: [],
    maxIterations: 1,
    concurrency: 1,
  };
}
