import type { LoadedConfig } from '../src/config/index.js';
import { type Engine, engineFromConfig } from '../src/engine/index.js';
import { silentLogger } from '../src/log/index.js';
import type { RedisClient } from '../src/redis/connection.js';

/** The engine a client uses to start runs, with the same job settings as the RatchetWorker of `loaded`. */
export function createBenchEngine(loaded: LoadedConfig, redis: RedisClient): Engine {
  return engineFromConfig({ config: loaded.config, redis, logger: silentLogger() });
}
