import type { TelemetryConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type {
  ModelCallReport,
  RunRecord,
  StepObserver,
  StepReport,
  ToolCallReport,
} from '../workflows/index.js';
import { RunTracer } from './run-tracer.js';
import { telemetrySettings } from './telemetry-settings.js';

/**
 * A worker's traces and metrics, as the steps see them (StepObserver). A report that cannot be turned into
 * a span or a count is logged and dropped: telemetry never fails a step.
 */
export class Telemetry implements StepObserver {
  constructor(
    private readonly tracer: RunTracer | undefined,
    private readonly logger: Logger,
  ) {}

  modelCall(call: ModelCallReport): void {
    this.guard('model call', () => this.tracer?.modelCall(call));
  }

  toolCall(call: ToolCallReport): void {
    this.guard('tool call', () => this.tracer?.toolCall(call));
  }

  runEnded(record: RunRecord): void {
    this.guard('run end', () => this.tracer?.runEnded(record));
  }

  runStarted(_record: Pick<RunRecord, 'agent'>): void {}

  stepEnded(_step: StepReport): void {}

  logFields(run: { run_id: string; root_run_id?: string | undefined }): Record<string, string> {
    return this.tracer ? this.tracer.logFields({ id: run.run_id, root_run_id: run.root_run_id ?? null }) : {};
  }

  /** Sends the spans still waiting. */
  async close(): Promise<void> {
    await this.tracer?.close();
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
  if (!settings.traces) return undefined;
  return new Telemetry(new RunTracer(settings.traces, { instanceId: options.instanceId }), options.logger);
}
