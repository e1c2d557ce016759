import type { LoadedConfig } from '../src/config/index.js';
import { benchConfig } from './bench-config.js';
import { markedScriptedKind } from './marked-model.js';

/**
 * idle: B alone, fair admission off; idle-fair: B alone on the deployment of `on` (fair admission on); off:
 * A's runs then B's, fair admission off (first come, first served); on: the same with fair admission on.
 */
export type FairnessMode = 'idle' | 'idle-fair' | 'off' | 'on';

/** Whether the mode's deployment has fair admission on. */
export function fairAdmissionOn(mode: FairnessMode): boolean {
  return mode === 'on' || mode === 'idle-fair';
}

export interface FairnessOptions {
  url: string;
  heavyRuns: number;
  lightRuns: number;
  concurrency: number;
  /** The scripted model's delay per call: runs hold a worker slot this long, like a (fast) model. */
  modelDelayMs: number;
  /**
   * `admission.recheck_s` with fair admission on (default: the config's, 30 s), and how long after A's last
   * submission B submits (default 0): together they put B behind a backlog of A's queued runs whose rechecks
   * come due, as a backlog older than recheck_s does in a deployment (decision 0053).
   */
  recheckS?: number;
  lightDelayMs?: number;
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
    sections: fairAdmissionOn(mode)
      ? {
          admission: {
            max_active_runs: options.concurrency,
            ...(options.recheckS === undefined ? {} : { recheck_s: options.recheckS }),
          },
          tenants: { a: { weight: 1 }, b: { weight: 1 } },
        }
      : {},
  });
}
