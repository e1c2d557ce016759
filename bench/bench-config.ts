import '../src/models/index.js';
import { configSchema, type LoadedConfig } from '../src/config/index.js';
import type { ScriptedReply } from '../src/models/scripted/index.js';

export const benchAgent = 'bench';

export interface BenchConfigOptions {
  url: string;
  /** Seed nodes of a Redis Cluster to run on instead of `url` (sessions then spread over 8 shards). */
  clusterNodes?: readonly string[] | undefined;
  prefix: string;
  /** A registered provider kind that takes the scripted model's fields. */
  providerKind: string;
  replies: ScriptedReply[];
  toolboxes: string[];
  maxIterations: number;
  concurrency: number;
  /** The config's telemetry section (BENCH_TELEMETRY=on: bench/telemetry-sink.ts); absent: off. */
  telemetry?: Record<string, unknown> | undefined;
  /** More top-level sections (the fairness bench's `admission` and `tenants`). */
  sections?: Record<string, unknown> | undefined;
  /** More keys of the worker section (the defaults otherwise). */
  worker?: Record<string, unknown> | undefined;
}

/**
 * A config built in code: one agent on one scripted model, one shard, and the worker section's defaults
 * (lock duration, stalled interval, attempts) except concurrency.
 */
export function benchConfig(options: BenchConfigOptions): LoadedConfig {
  const config = configSchema.parse({
    providers: [{ name: 'model', kind: options.providerKind, model: 'bench', replies: options.replies }],
    agents: [
      {
        name: benchAgent,
        provider: 'model',
        toolboxes: options.toolboxes,
        options: { max_iterations: options.maxIterations },
      },
    ],
    redis: options.clusterNodes
      ? { url: options.url, prefix: options.prefix, shards: 8, cluster_nodes: options.clusterNodes }
      : { url: options.url, prefix: options.prefix, shards: 1 },
    worker: { ...options.worker, concurrency: options.concurrency },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    ...options.sections,
  });
  return { config, path: '<bench>', configDir: process.cwd() };
}

/** `iterations - 1` replies that each call `noop` once, then a final answer. */
export function toolLoopReplies(iterations: number): ScriptedReply[] {
  const toolCall: ScriptedReply = { tool_calls: [{ name: 'noop', arguments: {} }] };
  return [...Array.from({ length: iterations - 1 }, () => toolCall), { text: 'done' }];
}
