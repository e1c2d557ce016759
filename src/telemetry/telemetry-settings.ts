import type { TelemetryConfig } from '../config/index.js';
import { legacyProviderAttribute } from './semconv.js';

/** Trace export as the config and the standard OTEL_* variables decide it. */
export interface TraceSettings {
  /** The OTLP/HTTP traces URL; undefined: the exporter reads the OTEL_EXPORTER_OTLP_* variables. */
  endpoint: string | undefined;
  headers: Record<string, string> | undefined;
  serviceName: string;
  exportDelayMs: number;
  captureMessageContent: boolean;
  /** Also emit `gen_ai.system` (see legacyProviderAttribute). */
  legacyProviderAttribute: boolean;
  /** BullMQ's spans of the step jobs (`telemetry.traces.queue_spans`). */
  queueSpans: boolean;
}

export interface TelemetrySettings {
  /** Undefined: no spans at all. */
  traces: TraceSettings | undefined;
  metrics: { workerHost: string; workerPort: number } | undefined;
}

function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

/**
 * The config's `telemetry` section with the standard variables applied: OTEL_SDK_DISABLED turns traces off,
 * OTEL_TRACES_EXPORTER=otlp on; OTEL_SERVICE_NAME and OTEL_BSP_SCHEDULE_DELAY win over the config;
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true turns content capture on.
 */
export function telemetrySettings(config: TelemetryConfig, env: NodeJS.ProcessEnv): TelemetrySettings {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((value) => value.trim());
  const tracesOn = !isTrue(env.OTEL_SDK_DISABLED) && (config.traces.enabled || exporters.includes('otlp'));
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return {
    traces: tracesOn
      ? {
          endpoint: config.traces.endpoint,
          headers: config.traces.headers,
          serviceName: env.OTEL_SERVICE_NAME?.trim() || config.traces.service_name,
          exportDelayMs:
            Number.isInteger(delay) && delay > 0 && delay <= 60_000 ? delay : config.traces.export_delay_ms,
          captureMessageContent:
            config.traces.capture_message_content ||
            isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
          legacyProviderAttribute: legacyProviderAttribute(env.OTEL_SEMCONV_STABILITY_OPT_IN),
          queueSpans: config.traces.queue_spans,
        }
      : undefined,
    metrics: config.metrics.enabled
      ? { workerHost: config.metrics.worker_host, workerPort: config.metrics.worker_port }
      : undefined,
  };
}
