import type { TelemetryConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type {
  ModelCallReport,
  QuestionRecord,
  RunRecord,
  StepObserver,
  StepReport,
  ToolCallReport,
} from '../workflows/index.js';
import { MetricsListener, type MetricsListenerOptions } from './metrics-listener.js';
import { RunTracer } from './run-tracer.js';
import { telemetrySettings } from './telemetry-settings.js';
import { WorkerMetrics } from './worker-metrics.js';

/**
 * A worker's traces and metrics, as the steps see them (StepObserver). A report that cannot be turned into
 * a span or a count is logged and dropped: telemetry never fails a step.
 */
export class Telemetry implements StepObserver {
  private listener: MetricsListener | undefined;

  constructor(
    private readonly tracer: RunTracer | undefined,
    readonly metrics: WorkerMetrics | undefined,
    private readonly logger: Logger,
  ) {}

  modelCall(call: ModelCallReport): void {
    this.guard('model call', () => {
      this.tracer?.modelCall(call);
      this.metrics?.modelCall(call);
    });
  }

  toolCall(call: ToolCallReport): void {
    this.guard('tool call', () => {
      this.tracer?.toolCall(call);
      this.metrics?.toolCall(call);
    });
  }

  runEnded(record: RunRecord): void {
    this.guard('run end', () => {
      this.tracer?.runEnded(record);
      this.metrics?.runEnded(record);
    });
  }

  runStarted(record: Pick<RunRecord, 'agent'>): void {
    this.guard('run start', () => this.metrics?.runStarted(record));
  }

  stepEnded(step: StepReport): void {
    this.guard('step', () => this.metrics?.stepEnded(step));
  }

  questionTimedOut(question: QuestionRecord, at: string): void {
    this.guard('question timeout', () => this.metrics?.questionTimedOut(question, at));
  }

  rateLimited(provider: string, waitMs: number): void {
    this.guard('rate limit wait', () => this.metrics?.rateLimited(provider, waitMs));
  }

  /** This worker found dead worker processes and released their steps. */
  deadWorkersNoticed(count: number): void {
    this.guard('dead worker', () => this.metrics?.deadWorkersNoticed(count));
  }

  /** A step job of this shard was found stalled and handed back (its worker died or stalled). */
  takeover(shard: number): void {
    this.guard('takeover', () => this.metrics?.takeover(shard));
  }

  logFields(run: { run_id: string; root_run_id?: string | undefined }): Record<string, string> {
    return this.tracer ? this.tracer.logFields({ id: run.run_id, root_run_id: run.root_run_id ?? null }) : {};
  }

  /** Serves the metrics on `host:port` (0: any free port), behind its guard; resolves with the port. */
  async listen(options: MetricsListenerOptions): Promise<number | undefined> {
    if (!this.metrics) return undefined;
    this.listener = new MetricsListener(this.metrics.registry);
    const { host, port } = options;
    try {
      return await this.listener.start(options);
    } catch (error) {
      // Two worker processes of one host with the same port: a config problem, said as one.
      throw new RatchetError(
        'config_invalid',
        `telemetry.metrics: the worker's metrics listener cannot listen on ${host}:${port} ` +
          `(${(error as Error).message}); give each worker process of a host its own worker_port, or 0 for any free one`,
        { cause: error },
      );
    }
  }

  /** Sends the spans still waiting and stops serving metrics. */
  async close(): Promise<void> {
    await Promise.allSettled([this.tracer?.close(), this.listener?.close()]);
  }

  private guard(what: string, report: () => void): void {
    try {
      report();
    } catch (error) {
      this.logger.warn({ err: error }, `telemetry: could not report a ${what}`);
    }
  }
}

/** The worker's telemetry as the config and the OTEL_* variables ask for it; undefined when all is off. */
export function createTelemetry(options: {
  config: TelemetryConfig;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  instanceId: string;
}): Telemetry | undefined {
  const settings = telemetrySettings(options.config, options.env);
  if (!settings.traces && !settings.metrics) return undefined;
  return new Telemetry(
    settings.traces ? new RunTracer(settings.traces, { instanceId: options.instanceId }) : undefined,
    settings.metrics ? new WorkerMetrics() : undefined,
    options.logger,
  );
}
