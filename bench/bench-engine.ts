import type { Redis } from 'ioredis';
import type { LoadedConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import { Engine } from '../src/workflows/engine.js';
import { finalFailureHeadroom } from '../src/workflows/step-queues.js';
import { benchAgent } from './bench-config.js';

/** The engine a client uses to start runs, with the same job settings as the RatchetWorker of `loaded`. */
export function createBenchEngine(loaded: LoadedConfig, redis: Redis): Engine {
  const { config } = loaded;
  return new Engine({
    redis,
    space: { prefix: config.redis.prefix, shards: config.redis.shards },
    jobs: {
      attempts: config.worker.step_attempts + finalFailureHeadroom,
      keepCompletedSeconds: config.worker.keep_completed_jobs_s,
    },
    eventsMaxLength: config.events.max_len,
    agents: [benchAgent],
    defaultAgent: benchAgent,
    logger: silentLogger(),
  });
}
