import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type QuestionKind, type QuestionRecord, questionKinds, type RunRecord } from '../workflows/index.js';
// The workers' buckets: the API's series of the same name must sum with theirs.
import { questionWaitBuckets, runBuckets } from './worker-metrics.js';

/**
 * What a scrape reads of the whole deployment: the engine's `systemState` (src/engine) gives it, the same
 * shape as GET /v1/system. Declared here, where it is read, since the engine is built above telemetry.
 */
export interface ScrapedSystemState {
  workers: readonly { alive: boolean }[];
  queues: readonly { shard: number; counts: Readonly<Record<string, number>> }[];
  runs_by_status: Readonly<Record<string, number>>;
}

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

  /** Named like the workers' series, so a sum over processes counts runs cancelled through the API too. */
  private readonly runsFinished = new Counter({
    name: 'ratchet_runs_finished_total',
    help: 'Runs this API process finished by cancelling them (status cancelled), by agent and status',
    labelNames: ['agent', 'status'],
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'ratchet_run_duration_seconds',
    help: 'From a run being created to its cancellation through this API process, by agent and status',
    labelNames: ['agent', 'status'],
    buckets: runBuckets,
    registers: [this.registry],
  });
  private readonly questionWait = new Histogram({
    name: 'ratchet_question_wait_seconds',
    help: 'From a question to a person being asked to its close through this API process (outcome answered, or cancelled with its run; the workers count timed_out), by kind',
    labelNames: ['kind', 'outcome'],
    buckets: questionWaitBuckets,
    registers: [this.registry],
  });
  private readonly oldestQuestion = new Gauge({
    name: 'ratchet_question_oldest_pending_age_seconds',
    help: 'Age of the oldest question still waiting for a person, by kind (0: none pending)',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  constructor(
    private readonly options: {
      systemState: () => Promise<ScrapedSystemState>;
      followers: () => number;
      /** When the oldest pending question of each kind was asked (ms; absent: none pending), no record read. */
      oldestPendingQuestions: () => Promise<Partial<Record<QuestionKind, number>>>;
      now?: () => number;
    },
  ) {}

  /** A run this process cancelled (the call whose write finished it). */
  runCancelled(record: RunRecord): void {
    const labels = { agent: record.agent, status: record.status };
    this.runsFinished.inc(labels);
    const endMs = Date.parse(record.finished_at ?? record.updated_at);
    this.runDuration.observe(labels, Math.max(0, endMs - Date.parse(record.created_at)) / 1000);
  }

  /** A question this process closed: answered, or cancelled with its run. */
  questionClosed(question: QuestionRecord, at: string, outcome: 'answered' | 'cancelled'): void {
    const waitedMs = Date.parse(at) - Date.parse(question.created_at);
    this.questionWait.observe({ kind: question.kind, outcome }, Math.max(0, waitedMs) / 1000);
  }

  /** The Prometheus text of a scrape. */
  async scrape(): Promise<string> {
    const [state, oldest] = await Promise.all([
      this.options.systemState(),
      this.options.oldestPendingQuestions(),
    ]);
    const now = this.options.now?.() ?? Date.now();
    for (const kind of questionKinds) {
      this.oldestQuestion.set({ kind }, Math.max(0, now - (oldest[kind] ?? now)) / 1000);
    }
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
