import type { LoadedConfig } from '../src/config/index.js';
import { benchConfig } from './bench-config.js';
import { markedScriptedKind } from './marked-model.js';

export type FairnessMode = 'idle' | 'off' | 'on';

export interface FairnessOptions {
  url: string;
  heavyRuns: number;
  lightRuns: number;
  concurrency: number;
  /** The scripted model's delay per call: runs hold a worker slot this long, like a (fast) model. */
  modelDelayMs: number;
}

/**
 * The config of section F, the same in this process (which submits) and in the worker process: fair
 * admission on means `admission.max_active_runs` = the worker's concurrency and equal weights.
 */
export function fairnessConfig(options: FairnessOptions, mode: FairnessMode, prefix: string): LoadedConfig {
  return benchConfig({
    url: options.url,
    prefix,
    providerKind: markedScriptedKind,
    replies: [{ text: 'done', delay_ms: options.modelDelayMs }],
    toolboxes: [],
    maxIterations: 1,
    concurrency: options.concurrency,
    sections:
      mode === 'on'
        ? {
            admission: { max_active_runs: options.concurrency },
            tenants: { a: { weight: 1 }, b: { weight: 1 } },
          }
        : {},
  });
}
