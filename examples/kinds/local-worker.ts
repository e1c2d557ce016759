// What the extension examples share: a worker and an engine on the config's Redis, the worker given the
// program's extensions, both stopped when the example is done (or fails).
import {
  closeRedis,
  createLogger,
  createRedis,
  type Engine,
  type Extensions,
  engineFromConfig,
  type LoadedConfig,
  RatchetWorker,
} from '../../src/index.js';

/** Runs `use` with an engine while a worker with `extensions` runs the config's steps. */
export async function withLocalWorker(
  loaded: LoadedConfig,
  extensions: Extensions,
  use: (engine: Engine) => Promise<void>,
): Promise<void> {
  const logger = createLogger({ level: 'warn' });
  const worker = new RatchetWorker({ loaded, toolboxes: [], logger, extensions });
  await worker.start();
  const redis = createRedis({ url: loaded.config.redis.url, logger, name: 'example' });
  const engine = engineFromConfig({ config: loaded.config, redis, logger });
  try {
    await use(engine);
  } finally {
    await engine.close();
    await worker.close();
    await closeRedis(redis);
  }
}
