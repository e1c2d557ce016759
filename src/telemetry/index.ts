export { createTelemetry, Telemetry } from './telemetry.js';
export { type TelemetrySettings, telemetrySettings } from './telemetry-settings.js';
