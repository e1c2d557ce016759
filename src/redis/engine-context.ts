import type { Logger } from '../log/index.js';
import type { RedisClient } from './connection.js';
import type { KeySpace } from './keys.js';
import type { StepQueues } from './step-queues.js';

/** What the engine's operations share: connections, key space, queues, settings and the clock. */
export interface EngineContext {
  redis: RedisClient;
  space: KeySpace;
  queues: StepQueues;
  eventsMaxLength: number;
  logger: Logger;
  now: () => Date;
}
