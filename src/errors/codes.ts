/**
 * The one registry of internal error codes. `retryable` decides queue behaviour in exactly one place
 * (src/workflows/retry-policy.ts): non-retryable errors fail the run at once, retryable ones are retried
 * with backoff until the step's attempts run out.
 */
export const errorCodes = {
  config_invalid: { retryable: false },
  record_invalid: { retryable: false },
  /**
   * A record of a newer version than this Ratchet reads (a newer worker wrote it during a rolling deploy):
   * retried with backoff, so a worker of the newer version takes the step meanwhile.
   */
  record_too_new: { retryable: true },
  run_not_found: { retryable: false },
  session_not_found: { retryable: false },
  agent_not_found: { retryable: false },
  session_busy: { retryable: false },
  run_finished: { retryable: false },
  /**
   * A message to a busy session found `options.max_queued_messages` messages waiting there already (queued,
   * and steered into its active run). `details`: limit, active_run_id.
   */
  queue_full: { retryable: false },
  /** A queued message that is not (or no longer) in its session's queue: it started its run, or never was. */
  queued_message_not_found: { retryable: false },
  /** `on_busy: steer` for a run that cannot take a steered message (a team's run: it has no iterations). */
  steer_unsupported: { retryable: false },
  /** A retry asked of a run that is not a failed or cancelled root agent run, or one retried already. */
  run_not_retryable: { retryable: false },
  /** A fork asked of a run whose chat cannot be copied (a team's run, a child run). */
  run_not_forkable: { retryable: false },
  question_not_found: { retryable: false },
  /** A remembered approval the session does not hold (decision 0046). */
  approval_not_found: { retryable: false },
  schedule_not_found: { retryable: false },
  /** A schedule created with the id of one that exists (decision 0036). */
  schedule_exists: { retryable: false },
  /** A signal to a run that keeps as many signals as it may (decision 0033). `details`: limit. */
  signals_full: { retryable: false },
  question_closed: { retryable: false },
  invalid_response: { retryable: false },
  /** A submission's idempotency key started a run for another request (decision 0035). */
  idempotency_key_reused: { retryable: false },
  /**
   * A run asked for more than its agent's config allows (e.g. a longer timeout_s), or a request went over a
   * configured bound (more session metadata than api.max_metadata_bytes). `details`: field, limit.
   */
  invalid_run_settings: { retryable: false },
  suspended: { retryable: false },
  max_iterations: { retryable: false },
  budget_exceeded: { retryable: false },
  max_rounds: { retryable: false },
  member_failed: { retryable: false },
  coordinator_invalid: { retryable: false },
  step_stalled: { retryable: false },
  /** The run (or the run above it) passed its deadline (`options.timeout_s`, or the run's own). */
  deadline_exceeded: { retryable: false },
  /** The request does not fit the model's context window even after compaction. */
  context_exceeded: { retryable: false },
  /** The final answer failed the agent's output guardrail (after its retries). */
  guardrail_failed: { retryable: false },
  /** The run's result broke its handoff contract (`contracts:`): the record keeps every error. */
  contract_violated: { retryable: false },
  /**
   * A contract rule written in code (`defineContractRule`) threw, or names a kind the checking process has not
   * registered: a bug or a deploy without it. The message names the rule and the contract.
   */
  contract_rule_failed: { retryable: false },
  /** An effect (`effects`) threw while planning a model request: a bug, the same again on every retry. */
  effect_failed: { retryable: false },
  /** A middleware (`middleware`) threw: a bug, the same again on every retry. The message names it. */
  middleware_failed: { retryable: false },
  /** A middleware refused a model request or its reply: the run fails with its reason. */
  middleware_refused: { retryable: false },
  model_rate_limited: { retryable: true },
  model_server_error: { retryable: true },
  model_network_error: { retryable: true },
  model_bad_response: { retryable: true },
  model_auth_failed: { retryable: false },
  model_request_invalid: { retryable: false },
  model_error: { retryable: true },
  /**
   * A model request stopped sending: no first byte of a streamed reply within the provider's
   * `first_token_timeout_ms`, or a gap in the body over `idle_timeout_ms`. Aborted and retried; the call counts
   * as retry waste (the provider may have billed what it generated).
   */
  model_stalled: { retryable: true },
  /** A model call ran past the `timeout` middleware's model_call_s: aborted, retried. */
  model_timeout: { retryable: true },
  /**
   * A model reply (text and tool arguments together) went over its provider's `max_reply_chars`. Not retried:
   * the limit is far above any reply a model is asked for, so a reply over it comes from a model stuck in a
   * loop or a hostile endpoint, and asking again would most likely pay for the same megabytes once more.
   */
  reply_too_large: { retryable: false },
  /** A chat entry holds more than a chat entry may (chat/chat-entry.ts): refused, never stored. */
  entry_too_large: { retryable: false },
  script_exhausted: { retryable: false },
  redis_unavailable: { retryable: true },
  lock_lost: { retryable: false },
  cancelled: { retryable: false },
  shutting_down: { retryable: true },
  /** The process serves as many event followers as it may (`api.max_followers`). */
  too_many_followers: { retryable: true },
  internal: { retryable: true },
} as const satisfies Record<string, { retryable: boolean }>;

export type ErrorCode = keyof typeof errorCodes;
