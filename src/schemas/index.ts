export {
  maxDayMs,
  maxHourMs,
  maxQuestionTimeoutS,
  maxRetentionS,
  maxRunTimeoutS,
  secondsLimit,
} from './duration-limits.js';
export { describeIssues, formatPath } from './issues.js';
export { maxQueuedMessagesLimit, type OnBusy, onBusyPolicies } from './on-busy.js';
export { parseJsonRecord, parseRecord } from './parse.js';
export { duration, integer, nullAsMissing, withDefault } from './schema-helpers.js';
