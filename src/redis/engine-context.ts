import type { Logger } from '../log/index.js';
import type { QuestionRecord } from '../workflows/question-record.js';
import type { RunRecord } from '../workflows/run-record.js';
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
  /**
   * Told of each run a cancellation of this engine finished (the record as written), once: only the call
   * whose write changed the status reports it (telemetry: the run's span and its count, decision 0024).
   * It must not throw: the cancellation is written already.
   */
  runCancelled?: (record: RunRecord) => void;
  /** Told of each question this engine closed (answered, or cancelled with its run), once, with when. */
  questionClosed?: (question: QuestionRecord, at: string) => void;
}
