import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../log/index.js';
import { coalesceWrites } from './coalesce-writes.js';

export interface ConnectionOptions {
  url: string;
  logger: Logger;
  /** Connection name shown by CLIENT LIST. */
  name: string;
  /**
   * Workers need `null` (retry forever, BullMQ's requirement); request/response callers (API) may prefer
   * a bound so they fail fast while Redis is away.
   */
  maxRetriesPerRequest?: number | null;
  /**
   * How commands sent close together share socket writes: `auto-pipeline` (ioredis' auto-pipelining, the
   * default: cheap for request/response callers), `per-turn` (one write per event-loop turn, see
   * coalesceWrites: workers) or `none` (subscribers).
   */
  batching?: 'auto-pipeline' | 'per-turn' | 'none';
  /** Connect on first use, not now: for a template that is only duplicated (BullMQ workers). */
  lazy?: boolean;
  /**
   * A command that gets no answer in this time fails ("Command timed out"), queued ones included: a
   * request/response caller (the API) is bounded even when Redis is frozen. Never on connections that
   * block (XREAD BLOCK, BullMQ workers): they would fail while they wait.
   */
  commandTimeoutMs?: number;
}

/** A Redis client with an error handler (an unhandled 'error' event would crash the process). */
export function createRedis(options: ConnectionOptions): Redis {
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? null : options.maxRetriesPerRequest,
    connectionName: options.name,
    enableAutoPipelining: (options.batching ?? 'auto-pipeline') === 'auto-pipeline',
    lazyConnect: options.lazy ?? false,
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  };
  const redis = new Redis(options.url, redisOptions);
  if (options.batching === 'per-turn') coalesceWrites(redis);
  let lastErrorLogged = 0;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastErrorLogged < 5000) return;
    lastErrorLogged = now;
    options.logger.warn({ err: error, connection: options.name }, 'redis connection error');
  });
  return redis;
}

/** Quit politely; disconnect if Redis does not answer. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'wait') {
    // A lazy client that never connected: quitting would connect it first.
    redis.disconnect();
    return;
  }
  try {
    await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000))]);
  } catch {
    // already closed
  } finally {
    redis.disconnect();
  }
}
