export { ApiMetrics } from './api-metrics.js';
export { runSpanContext } from './run-span.js';
export { RunTracer } from './run-tracer.js';
export { createTelemetry, Telemetry } from './telemetry.js';
export { type TelemetrySettings, telemetrySettings } from './telemetry-settings.js';
export type { TracedRun } from './trace-ids.js';
