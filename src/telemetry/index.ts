export { ApiMetrics } from './api-metrics.js';
export { createTelemetry, Telemetry } from './telemetry.js';
export { type TelemetrySettings, telemetrySettings } from './telemetry-settings.js';
