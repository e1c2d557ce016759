// The client face of the durable engine: what the API, the MCP server, the CLI, the worker and `ratchet/testing`
// use to start, read, answer and cancel runs. It records and enqueues; workers run the steps.

export { Engine } from './engine.js';
export { engineFromConfig, iterationLimit } from './engine-from-config.js';
export type { EngineOptions, StartedRun, StartRunInput } from './engine-options.js';
export type {
  ExternalEventSettings,
  PublishedEventResult,
  SentEvent,
  SignalResult,
  TriggeredRun,
} from './external-events.js';
export type { SystemState } from './inspection.js';
export type { ForkInput, SteerLimits } from './run-steering.js';
export type { FireOutcome, ScheduleState, Schedules } from './schedules.js';
export type { SessionNote } from './session-data-view.js';
export type { WebhookDelivery, WebhookDeliveryPage } from './webhooks.js';
