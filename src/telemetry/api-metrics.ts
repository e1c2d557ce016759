import { Gauge, Registry } from 'prom-client';
import type { SystemState } from '../workflows/index.js';

/**
 * The API's Prometheus metrics (decision 0024): the state of the whole deployment, read from Redis at each
 * scrape (one `systemState` read), and this process's event followers. Served by the API alone, so a sum over
 * scraped processes does not count the shared state once per worker.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly queueJobs = new Gauge({
    name: 'ratchet_queue_jobs',
    help: 'Step jobs in each shard’s queue, by state (waiting, active, delayed, failed, waiting_children, prioritized)',
    labelNames: ['shard', 'state'],
    registers: [this.registry],
  });
  private readonly runs = new Gauge({
    name: 'ratchet_runs',
    help: 'Runs in the run index, by status (waiting_input: waiting for a person’s answer)',
    labelNames: ['status'],
    registers: [this.registry],
  });
  private readonly workers = new Gauge({
    name: 'ratchet_workers',
    help: 'Registered worker processes, by state (dead: heartbeat expired, not yet taken over)',
    labelNames: ['state'],
    registers: [this.registry],
  });
  private readonly followers = new Gauge({
    name: 'ratchet_sse_followers',
    help: 'Event streams (SSE) this API process serves now',
    registers: [this.registry],
  });

  constructor(
    private readonly options: { systemState: () => Promise<SystemState>; followers: () => number },
  ) {}

  /** The Prometheus text of a scrape. */
  async scrape(): Promise<string> {
    const state = await this.options.systemState();
    this.queueJobs.reset();
    for (const queue of state.queues) {
      for (const [name, count] of Object.entries(queue.counts)) {
        this.queueJobs.set({ shard: String(queue.shard), state: name }, count);
      }
    }
    this.runs.reset();
    for (const [status, count] of Object.entries(state.runs_by_status)) this.runs.set({ status }, count);
    const alive = state.workers.filter((worker) => worker.alive).length;
    this.workers.set({ state: 'alive' }, alive);
    this.workers.set({ state: 'dead' }, state.workers.length - alive);
    this.followers.set(this.options.followers());
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
