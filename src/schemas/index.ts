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
export { describeIssues, formatPath } from './issues.js';
export { parseJsonRecord, parseRecord } from './parse.js';
export { duration, integer, nullAsMissing, withDefault } from './schema-helpers.js';
