export {
  maxDayMs,
  maxHourMs,
  maxQuestionTimeoutS,
  maxRetentionS,
  maxRunTimeoutS,
  secondsLimit,
} from './duration-limits.js';
export {
  boundedJsonValue,
  eventIdSchema,
  eventNameSchema,
  externalEventLimits,
  jsonBytes,
} from './external-events.js';
export { idempotencyKeySchema, maxIdempotencyKeyChars } from './idempotency-key.js';
export { describeIssues, formatPath } from './issues.js';
export { maxQueuedMessagesLimit, type OnBusy, onBusyPolicies } from './on-busy.js';
export { parseJsonRecord, parseRecord } from './parse.js';
export {
  defineRecordKind,
  migrateRecord,
  oldestReadableVersion,
  type RecordKind,
  type RecordMigration,
  recordKindOf,
  recordKinds,
} from './record-kinds.js';
export {
  type ScheduleSpec,
  type ScheduleSpecInput,
  scheduleEveryMaxS,
  scheduleInputMaxChars,
  scheduleMissedAfterMaxS,
  scheduleSpecSchema,
} from './schedule-spec.js';
export { duration, integer, nullAsMissing, withDefault } from './schema-helpers.js';
export {
  defaultRunPriority,
  defaultTenant,
  maxRunPriority,
  maxTenantNameChars,
  minRunPriority,
  runPrioritySchema,
  tenantNamePattern,
  tenantNameSchema,
} from './tenant.js';
