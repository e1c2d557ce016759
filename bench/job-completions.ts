import { performance } from 'node:perf_hooks';
import { QueueEvents } from 'bullmq';
import type { RedisClient } from '../src/redis/connection.js';

interface Waiter {
  resolve: (time: number) => void;
  reject: (error: Error) => void;
}

/**
 * When jobs of one queue complete, as seen by a client (QueueEvents reading the queue's event stream): the
 * same detection for raw BullMQ and for Ratchet. It reads the stream from its start, and remembers completions
 * nobody waits for yet, so a job that completes before `wait` is called is not missed.
 */
export class JobCompletions {
  private readonly completed = new Map<string, number>();
  private readonly failed = new Map<string, string>();
  private readonly waiters = new Map<string, Waiter>();

  private constructor(private readonly events: QueueEvents) {
    events.on('completed', ({ jobId }) => this.settle(jobId, performance.now(), undefined));
    events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, Number.NaN, failedReason));
  }

  static async open(options: {
    url: string;
    prefix: string;
    queueName: string;
    /** A client to duplicate instead of connecting to `url` (a Redis Cluster's). */
    connection?: RedisClient;
  }): Promise<JobCompletions> {
    const events = new QueueEvents(options.queueName, {
      connection: options.connection ?? { url: options.url, maxRetriesPerRequest: null },
      prefix: options.prefix,
      lastEventId: '0-0',
    });
    events.on('error', () => {});
    await events.waitUntilReady();
    return new JobCompletions(events);
  }

  /** Resolves with the `performance.now()` at which the job's completion was seen. */
  wait(jobId: string, timeoutMs: number): Promise<number> {
    const done = this.completed.get(jobId);
    if (done !== undefined) return Promise.resolve(done);
    const reason = this.failed.get(jobId);
    if (reason !== undefined) return Promise.reject(new Error(`job ${jobId} failed: ${reason}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(jobId);
        reject(new Error(`job ${jobId} did not complete within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(jobId, {
        resolve: (time) => {
          clearTimeout(timer);
          resolve(time);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  async close(): Promise<void> {
    await this.events.close();
  }

  private settle(jobId: string, time: number, failedReason: string | undefined): void {
    const waiter = this.waiters.get(jobId);
    this.waiters.delete(jobId);
    if (failedReason === undefined) {
      if (waiter) waiter.resolve(time);
      else this.completed.set(jobId, time);
    } else if (waiter) {
      waiter.reject(new Error(`job ${jobId} failed: ${failedReason}`));
    } else {
      this.failed.set(jobId, failedReason);
    }
  }
}
