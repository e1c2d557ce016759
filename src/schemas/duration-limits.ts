/**
 * The longest durations Ratchet accepts from outside (config files, API and MCP requests, a model's tool
 * arguments), checked where they enter. Each is far below what a timer or a stored date can hold: a deadline
 * of now + the longest run timeout is a date every record schema takes, and a setting that feeds a single
 * Node timer stays below its 2^31-1 ms (about 24.8 days), past which the timer fires at once.
 */
const daySeconds = 86_400;

/** A run's deadline, `options.timeout_s` and a run's own `timeout_s`: 365 days. */
export const maxRunTimeoutS = 365 * daySeconds;

/** How long a question may wait for its answer (ask_user's `timeout_s`): 365 days, like a run. */
export const maxQuestionTimeoutS = 365 * daySeconds;

/** Retention windows and how long finished jobs are kept: 10 years (0 keeps for ever). */
export const maxRetentionS = 3650 * daySeconds;

/** Settings of one wait inside a process (a request, a connection, a grace period): one hour. */
export const maxHourMs = 3_600_000;

/** Settings of a longer wait or an interval (a tool call, a backoff, a recheck): one day. */
export const maxDayMs = 86_400_000;

/** Readable form of a limit in seconds, for error messages and docs: "31536000 (365 days)". */
export function secondsLimit(seconds: number): string {
  return `${seconds} (${seconds / daySeconds} days)`;
}
