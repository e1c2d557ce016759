import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../log/index.js';

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
  /** Off for subscriber connections. */
  autoPipelining?: boolean;
}

/** A Redis client with an error handler (an unhandled 'error' event would crash the process). */
export function createRedis(options: ConnectionOptions): Redis {
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? null : options.maxRetriesPerRequest,
    connectionName: options.name,
    // Steps running concurrently send their commands in one write per event-loop tick.
    enableAutoPipelining: options.autoPipelining ?? true,
  };
  const redis = new Redis(options.url, redisOptions);
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
  try {
    await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000))]);
  } catch {
    // already closed
  } finally {
    redis.disconnect();
  }
}
