import { resolve } from 'node:path';
import { apiTokenValues, type LoadedConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { ensureRedis, type LocalRedis, LocalRedisError } from '../redis/local-redis.js';
import type { ToolBox } from '../tools/index.js';
import { RatchetWorker } from '../worker/index.js';
import { CliError } from './cli-error.js';
import { type ApiProcess, startApi } from './start-api.js';

export interface DevStackOptions {
  loaded: LoadedConfig;
  toolboxes: readonly ToolBox[];
  logger: Logger;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Where a redis-server started here keeps its data; default `.ratchet/redis` in the working directory. */
  redisDataDir?: string;
  say: (line: string) => void;
  /** How long closing waits for in-flight steps (they are handed back to the queue after it). */
  shutdownTimeoutMs?: number;
}

export interface DevStack {
  /** The API's base URL. */
  url: string;
  /** A token the API accepts, when it requires one. */
  token: string | undefined;
  redis: LocalRedis;
  close(): Promise<void>;
}

/** Redis (started when none answers), a worker and the API, in this process. */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const { loaded, logger } = options;
  // A cluster is used as it is; one Redis is started here when none answers.
  const redis: LocalRedis = loaded.config.redis.cluster_nodes
    ? { url: loaded.config.redis.cluster_nodes[0] as string, started: undefined, stop: async () => {} }
    : await ensureRedis({
        url: loaded.config.redis.url,
        dataDir: options.redisDataDir ?? resolve('.ratchet/redis'),
        say: options.say,
      }).catch((error: unknown) => {
        // Its message says how to start Redis: the CLI prints it alone.
        throw error instanceof LocalRedisError ? new CliError(error.message) : error;
      });
  let worker: RatchetWorker | undefined;
  let api: ApiProcess | undefined;
  const close = async () => {
    try {
      await api?.close();
    } finally {
      try {
        await worker?.close(options.shutdownTimeoutMs);
      } finally {
        await redis.stop();
      }
    }
  };
  try {
    worker = new RatchetWorker({ loaded, toolboxes: options.toolboxes, logger });
    await worker.start();
    api = await startApi({
      loaded,
      toolboxes: options.toolboxes,
      logger,
      host: options.host,
      port: options.port,
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { url: api.url, token: apiTokenValues(loaded.config.api.tokens)[0], redis, close };
}
