import type { Engine } from '../engine/index.js';
import type { Logger } from '../log/index.js';

/** How often a worker looks for sessions whose active run ended with messages queued (decision 0032). */
export const queuedRunCheckMs = 250;

/**
 * Starts the next run of each session whose active run ended with messages queued: the commit that ended the
 * run marked the session in its shard's queue starts, and every worker looks at the shards it serves every
 * `queuedRunCheckMs`. A run's id derives from its message's, so workers that look at once, or one that
 * looks again after another died mid-start, start it once. A look that fails is logged and the next one
 * tries again: nothing is lost while the mark stays.
 */
export class QueuedRunStarter {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly options: {
      engine: Engine;
      shards: readonly number[];
      logger: Logger;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.look().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.intervalMs ?? queuedRunCheckMs);
    this.timer.unref();
  }

  private async look(): Promise<void> {
    for (const shard of this.options.shards) {
      if (this.closed) return;
      try {
        const started = await this.options.engine.startQueuedRuns(shard);
        if (started > 0) this.options.logger.info({ shard, started }, 'queued messages started their runs');
      } catch (error) {
        this.options.logger.warn(
          { err: error, shard },
          'starting queued runs failed; the next look tries again',
        );
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
