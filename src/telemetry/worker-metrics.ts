import { Counter, Histogram, Registry } from 'prom-client';
import type {
  ModelCallReport,
  QuestionRecord,
  RunRecord,
  StepReport,
  ToolCallReport,
} from '../workflows/index.js';

/** Seconds, from a fast step (a few ms) to a long model call or tool. */
const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Runs last from seconds to hours. */
export const runBuckets = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];
/** The GenAI conventions' advice for gen_ai.client.token.usage. */
const tokenBuckets = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/**
 * prom-client's child of a metric for one list of label values (in the metric's labelNames order), looked up
 * once: a step's observations then skip hashing their labels. The label values are bounded (see below), and
 * so is this cache; worker metrics are never reset, which would orphan the children.
 */
class Children<Child> {
  private readonly children = new Map<string, Child>();

  constructor(private readonly metric: { labels(...values: string[]): Child }) {}

  of(...values: string[]): Child {
    const key = values.join('\u0000');
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.metric.labels(...values);
      this.children.set(key, child);
    }
    return child;
  }
}

/** A person answers in seconds, or after a night or a weekend. */
export const questionWaitBuckets = [
  1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200,
];

/** A tool name the model made up is not a label value (unbounded): such calls count under this one. */
export const unknownToolLabel = '(unknown)';

/**
 * A worker process's Prometheus metrics (decision 0024), counted from what its steps report. Label values are
 * agent, provider, model and tool names from the config and the registered toolboxes, step kinds, statuses and
 * error codes: never run or session ids, never a name the model made up.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly runsStarted = new Counter({
    name: 'ratchet_runs_started_total',
    help: 'Runs whose first step this worker started first, by agent',
    labelNames: ['agent'],
    registers: [this.registry],
  });
  private readonly runsFinished = new Counter({
    name: 'ratchet_runs_finished_total',
    help: 'Runs finished by a worker, by agent and status (a run cancelled through the API is counted by the API; one a worker cancels, here)',
    labelNames: ['agent', 'status'],
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'ratchet_run_duration_seconds',
    help: 'From a run being created to its end, by agent and status',
    labelNames: ['agent', 'status'],
    buckets: runBuckets,
    registers: [this.registry],
  });
  private readonly stepDuration = new Histogram({
    name: 'ratchet_step_duration_seconds',
    help: 'One execution of a step job, by kind and how it ended (done, parked, failed)',
    labelNames: ['kind', 'outcome'],
    buckets: durationBuckets,
    registers: [this.registry],
  });
  private readonly modelDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Model calls (gen_ai.client.operation.duration), by provider entry, model, agent, purpose and error type',
    labelNames: ['operation', 'provider', 'model', 'agent', 'purpose', 'error_type'],
    buckets: durationBuckets,
    registers: [this.registry],
  });
  private readonly tokenUsage = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens per model call (gen_ai.client.token.usage), by token type, provider entry, model and agent',
    labelNames: ['operation', 'token_type', 'provider', 'model', 'agent'],
    buckets: tokenBuckets,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'ratchet_model_tokens_total',
    help: 'Tokens of model calls, by token type (input, output), provider entry, model and agent',
    labelNames: ['token_type', 'provider', 'model', 'agent'],
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: 'ratchet_model_cost_usd_total',
    help: 'What model calls cost in USD (config pricing), by provider entry, model and agent',
    labelNames: ['provider', 'model', 'agent'],
    registers: [this.registry],
  });
  private readonly repeated = new Counter({
    name: 'ratchet_model_calls_repeated_total',
    help: 'Model calls made again because an earlier execution of the step had started them, by cause',
    labelNames: ['cause', 'provider', 'model', 'agent'],
    registers: [this.registry],
  });
  private readonly toolDuration = new Histogram({
    name: 'ratchet_tool_call_duration_seconds',
    help: 'Tool calls whose outcome this worker recorded (from the intent: a delegation spans its child run), by tool, agent and outcome',
    labelNames: ['tool', 'agent', 'outcome'],
    buckets: durationBuckets,
    registers: [this.registry],
  });
  private readonly takeovers = new Counter({
    name: 'ratchet_step_takeovers_total',
    help: 'Step jobs this worker found stalled (their worker died or stalled) and handed back to the queue, by shard',
    labelNames: ['shard'],
    registers: [this.registry],
  });

  private readonly queueWait = new Histogram({
    name: 'ratchet_step_queue_wait_seconds',
    help: 'How long a step job waited in its queue before a worker took it (first starts of jobs not added delayed), by kind and shard',
    labelNames: ['kind', 'shard'],
    buckets: durationBuckets,
    registers: [this.registry],
  });
  private readonly rateLimitWaits = new Counter({
    name: 'ratchet_rate_limit_waits_total',
    help: "Model calls that waited for their provider's shared rate limit (their step was parked), by provider entry",
    labelNames: ['provider'],
    registers: [this.registry],
  });
  private readonly rateLimitWaitSeconds = new Counter({
    name: 'ratchet_rate_limit_wait_seconds_total',
    help: 'How long those steps were parked for, by provider entry',
    labelNames: ['provider'],
    registers: [this.registry],
  });
  /** Named like the API's series, so a sum over processes has every way a question closes. */
  private readonly questionWait = new Histogram({
    name: 'ratchet_question_wait_seconds',
    help: 'From a question to a person being asked to its close by its own timeout in a step of this worker (outcome timed_out), by kind',
    labelNames: ['kind', 'outcome'],
    buckets: questionWaitBuckets,
    registers: [this.registry],
  });
  private readonly deadWorkers = new Counter({
    name: 'ratchet_dead_workers_noticed_total',
    help: 'Worker processes whose heartbeat expired, noticed by this worker, which released their steps',
    registers: [this.registry],
  });

  private readonly stepDurationOf = new Children(this.stepDuration);
  private readonly queueWaitOf = new Children(this.queueWait);
  private readonly modelDurationOf = new Children(this.modelDuration);
  private readonly tokenUsageOf = new Children(this.tokenUsage);
  private readonly tokensOf = new Children(this.tokens);
  private readonly toolDurationOf = new Children(this.toolDuration);

  runStarted(record: Pick<RunRecord, 'agent'>): void {
    this.runsStarted.inc({ agent: record.agent });
  }

  runEnded(record: RunRecord): void {
    const labels = { agent: record.agent, status: record.status };
    this.runsFinished.inc(labels);
    const endMs = Date.parse(record.finished_at ?? record.updated_at);
    this.runDuration.observe(labels, Math.max(0, endMs - Date.parse(record.created_at)) / 1000);
  }

  stepEnded(step: StepReport): void {
    this.stepDurationOf.of(step.kind, step.outcome).observe(step.durationMs / 1000);
    if (step.queueWaitMs !== undefined)
      this.queueWaitOf.of(step.kind, String(step.shard)).observe(step.queueWaitMs / 1000);
  }

  rateLimited(provider: string, waitMs: number): void {
    this.rateLimitWaits.inc({ provider });
    this.rateLimitWaitSeconds.inc({ provider }, Math.max(0, waitMs) / 1000);
  }

  questionTimedOut(question: QuestionRecord, at: string): void {
    const waitedMs = Date.parse(at) - Date.parse(question.created_at);
    this.questionWait.observe({ kind: question.kind, outcome: 'timed_out' }, Math.max(0, waitedMs) / 1000);
  }

  deadWorkersNoticed(count: number): void {
    this.deadWorkers.inc(count);
  }

  modelCall(call: ModelCallReport): void {
    const { name: provider, model } = call.provider;
    const agent = call.agent;
    this.modelDurationOf
      .of('chat', provider, model, agent, call.purpose, call.errorCode ?? '')
      .observe((call.endMs - call.startMs) / 1000);
    if (call.usage) {
      this.tokenUsageOf.of('chat', 'input', provider, model, agent).observe(call.usage.input_tokens);
      this.tokenUsageOf.of('chat', 'output', provider, model, agent).observe(call.usage.output_tokens);
      this.tokensOf.of('input', provider, model, agent).inc(call.usage.input_tokens);
      this.tokensOf.of('output', provider, model, agent).inc(call.usage.output_tokens);
    }
    const where = { provider, model, agent };
    if (call.costUsd) this.cost.inc(where, call.costUsd);
    if (call.repeat) this.repeated.inc({ cause: call.repeat, ...where });
  }

  toolCall(call: ToolCallReport): void {
    this.toolDurationOf
      .of(call.toolKnown ? call.toolName : unknownToolLabel, call.agent, call.isError ? 'error' : 'ok')
      .observe(Math.max(0, call.endMs - call.startMs) / 1000);
  }

  takeover(shard: number): void {
    this.takeovers.inc({ shard: String(shard) });
  }
}
