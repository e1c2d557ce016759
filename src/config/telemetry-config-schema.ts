import { z } from 'zod';
import { duration, integer, nullAsMissing, withDefault } from '../schemas/index.js';

/**
 * Traces (OTLP over HTTP) and Prometheus metrics (docs/config.md, `telemetry`; decision 0024). Both are off
 * unless configured here or by the standard OTEL_* variables; off, a worker creates no span and counts
 * nothing.
 */
const tracesSchema = z.strictObject({
  /** Export spans. The standard `OTEL_TRACES_EXPORTER=otlp` turns them on too; `OTEL_SDK_DISABLED=true` off. */
  enabled: withDefault(z.boolean(), false),
  /**
   * Where spans go: the full URL of the OTLP/HTTP traces endpoint (`…/v1/traces`). Absent: the standard
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`), else
   * http://localhost:4318/v1/traces.
   */
  endpoint: z.preprocess(
    nullAsMissing,
    z
      .string()
      .regex(/^https?:\/\/\S+$/, { error: 'must be an http:// or https:// URL' })
      .optional(),
  ),
  /** Headers of each export request (an API key: use `${VAR}`); absent: `OTEL_EXPORTER_OTLP_HEADERS`. */
  headers: z.preprocess(nullAsMissing, z.record(z.string().min(1), z.string()).optional()),
  /** `service.name` of the spans; `OTEL_SERVICE_NAME` wins when set. */
  service_name: withDefault(z.string().min(1), 'ratchet'),
  /** How long finished spans wait to be sent in one batch (`OTEL_BSP_SCHEDULE_DELAY` wins when set). */
  export_delay_ms: withDefault(duration(10, 60_000, '1 minute'), 1_000),
  /**
   * Put what the model was sent and answered, and tool arguments and results, on the spans (through the
   * secret redactor). Also on when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
   */
  capture_message_content: withDefault(z.boolean(), false),
  /**
   * BullMQ's own spans of the step jobs (add, process, complete ...) from the workers, joined to the runs'
   * traces. Off by default: they are three spans per step job besides the run's own one, and cost a worker
   * several times what the run spans do (docs/operations.md has the figures).
   */
  queue_spans: withDefault(z.boolean(), false),
});

const metricsSchema = z.strictObject({
  /** Serve `GET /metrics` (Prometheus text) on the API's port and on each worker's `worker_port`. */
  enabled: withDefault(z.boolean(), false),
  /** The address a worker's metrics listener binds to. */
  worker_host: withDefault(z.string().min(1), '127.0.0.1'),
  /** The port of a worker's metrics listener (0: any free port, logged at start). */
  worker_port: withDefault(integer(0, 65_535), 9464),
  /**
   * A bearer token every scrape of a worker's metrics listener must send (`Authorization: Bearer …`); absent:
   * none. Use `${VAR}` with a secret-named variable. The API's own /metrics takes `api.tokens`.
   */
  worker_token: z.preprocess(
    nullAsMissing,
    z
      .string()
      .min(16, { error: 'must be at least 16 characters' })
      .regex(/^\S+$/, { error: 'must not contain spaces (a bearer token is one word)' })
      .optional(),
  ),
});

export const telemetryConfigSchema = z.strictObject({
  traces: withDefault(tracesSchema, {}),
  metrics: withDefault(metricsSchema, {}),
});

export type TelemetryConfig = z.output<typeof telemetryConfigSchema>;
