import type { Message } from '../../../chat/index.js';
import { RatchetError, toRatchetError } from '../../../errors/index.js';
import type { Completion, CompletionContext, CompletionRequest } from '../../../models/completer.js';
import { costOf } from '../../../models/pricing.js';
import { estimateTokens } from '../../../models/token-estimate.js';
import { type Park, park } from '../runner/step-action.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import { type ModelCallReport, type ObservedRun, repeatCauseOf } from '../runner/step-observer.js';
import { type ModelCallCounter, takeLoadCount } from './model-call-count.js';

/**
 * One model request of an iteration, within the provider's shared limits: admitted by the rate limiter (a
 * step that must wait is parked in the queue, not held in a worker), reconciled with the usage the reply
 * reports, and a 429 holds every worker back for the retry-after. Errors carry the provider's retry policy.
 */
export async function callModel(
  context: StepContext,
  agent: AgentRuntime,
  request: CompletionRequest,
  /**
   * The journal counter of model calls started for this request (retry waste), or the count an iteration's
   * load made for its call (decision 0054).
   */
  counter: ModelCallCounter,
  /** The run the call is made for, and why: for traces and metrics. */
  run: ObservedRun,
  purpose: ModelCallReport['purpose'],
): Promise<Completion | Park> {
  const { services } = context;
  const { provider } = agent;
  const limits = provider.rateLimit;
  const limited = limits !== undefined && (limits.rpm > 0 || limits.input_tpm > 0 || limits.output_tpm > 0);
  const reservationId = `${context.jobId}:${context.started}`;
  const tenant = run.tenant ?? 'default';
  const budget = services.tenantBudgets?.(tenant);
  const budgetLimit = `tenant:${tenant}`;
  if (budget !== undefined) {
    // The tenant's budget first: a step it holds back takes no room of the provider's meanwhile.
    const admission = await services.limiter.admit(
      budgetLimit,
      { rpm: 0, inputTpm: 0, outputTpm: 0, totalTpm: budget },
      { id: reservationId, inputTokens: estimateInputTokens(request.messages), outputTokens: 0 },
      services.now().getTime(),
    );
    if (!admission.admitted) {
      context.logger.info(
        { tenant, wait_ms: admission.waitMs },
        "over its tenant's tokens_per_minute: step parked",
      );
      return park(services.now().getTime() + admission.waitMs);
    }
  }
  if (limited) {
    const admission = await services.limiter.admit(
      provider.name,
      {
        rpm: limits.rpm,
        inputTpm: limits.input_tpm,
        outputTpm: limits.output_tpm,
        windowMs: limits.window_ms,
      },
      { id: reservationId, inputTokens: estimateInputTokens(request.messages), outputTokens: 0 },
      services.now().getTime(),
    );
    if (!admission.admitted) {
      services.observer?.rateLimited(provider.name, admission.waitMs);
      context.logger.info(
        { provider: provider.name, wait_ms: admission.waitMs },
        'rate limited: step parked',
      );
      return park(services.now().getTime() + admission.waitMs);
    }
  }
  // Counted before the request, so a later execution learns that this call was made if this one dies before
  // its reply is recorded (retry waste): by the iteration's load (decision 0054) for its first call, else
  // here, without waiting (the connection pipelines it). A refused request is uncounted again; a stalled one
  // is not (see below).
  const taken = takeLoadCount(counter);
  const count = (by: number) =>
    context.store
      .countInJournal(taken.field, by)
      .catch((error: unknown) => context.logger.warn({ err: error }, 'model call not counted'));
  const counted = taken.calls === undefined ? count(1) : Promise.resolve(taken.calls);
  const { observer } = services;
  const startMs = observer ? Date.now() : 0;
  try {
    const completion = await agent.completer.complete(request, context.signal);
    // In parallel with the request, so it costs no time; awaited so it is recorded before the reply is used.
    const calls = await counted;
    if (observer)
      observer.modelCall(report(context, agent, request, { run, purpose }, startMs, calls, completion));
    if (budget !== undefined) {
      // The tenant's reservation counts what the provider reported, from now on.
      await services.limiter.settle(budgetLimit, {
        reservationId,
        inputTokens: completion.usage.input_tokens,
        outputTokens: completion.usage.output_tokens,
        now: services.now().getTime(),
      });
    }
    if (limited || completion.rateLimit) {
      await services.limiter.settle(provider.name, {
        ...(limited
          ? {
              reservationId,
              inputTokens: completion.usage.input_tokens,
              outputTokens: completion.usage.output_tokens,
              now: services.now().getTime(),
            }
          : {}),
        holdUntil: holdFromHeaders(completion, services.now().getTime()),
      });
    }
    return completion;
  } catch (thrown) {
    const calls = await counted;
    const error = toRatchetError(thrown);
    if (observer)
      observer.modelCall(report(context, agent, request, { run, purpose }, startMs, calls, error));
    // A stalled request may have been billed for what the model generated before it stopped: it stays
    // counted, so the attempt that succeeds records it as retry waste.
    if (error.code !== 'model_stalled') void count(-1);
    if (error.code === 'model_rate_limited') {
      await services.limiter.settle(provider.name, {
        holdUntil: services.now().getTime() + (error.retryAfterMs ?? 1_000),
      });
    }
    if (
      !error.code.startsWith('model_') ||
      (limits?.max_retries === undefined && limits?.base_delay_ms === undefined)
    ) {
      throw error;
    }
    throw new RatchetError(error.code, error.message, {
      cause: error,
      retryable: error.retryable,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      details: {
        ...error.details,
        ...(limits.max_retries === undefined ? {} : { max_attempts: limits.max_retries + 1 }),
        ...(limits.base_delay_ms === undefined ? {} : { backoff_base_ms: limits.base_delay_ms }),
      },
    });
  }
}

/**
 * The call for traces and metrics. The journal's counter says whether an earlier execution of the step had
 * started the same call (it counted 1 before this one added its own).
 */
function report(
  context: StepContext,
  agent: AgentRuntime,
  request: CompletionRequest,
  observed: { run: ObservedRun; purpose: ModelCallReport['purpose'] },
  startMs: number,
  /** The counter after this call added itself; not a number when it could not be counted. */
  calls: unknown,
  outcome: Completion | RatchetError,
): ModelCallReport {
  const failed = outcome instanceof RatchetError;
  return {
    run: observed.run,
    agent: agent.name,
    jobId: context.jobId,
    started: context.started,
    attempt: context.attempt,
    iteration: request.context.iteration,
    purpose: observed.purpose,
    provider: {
      name: agent.provider.name,
      kind: agent.provider.kind ?? agent.provider.name,
      model: agent.provider.model,
    },
    startMs,
    endMs: Date.now(),
    usage: failed ? undefined : outcome.usage,
    costUsd: failed ? undefined : costOf(outcome.usage, agent.provider.price),
    errorCode: failed ? outcome.code : undefined,
    repeat: typeof calls === 'number' && calls > 1 ? repeatCauseOf(context.attempt) : undefined,
    messages: request.messages,
    reply: failed ? undefined : outcome.parts,
  };
}

/** Where a request comes from: the step's job (its session, run and iteration), the agent and the attempt. */
export function requestContext(
  context: StepContext,
  data: { session_id: string; run_id: string; iteration: number },
  agent: string,
  purpose?: CompletionContext['purpose'],
): CompletionContext {
  return {
    sessionId: data.session_id,
    runId: data.run_id,
    agent,
    iteration: data.iteration,
    attempt: context.attempt,
    ...(purpose ? { purpose } : {}),
  };
}

/** A rough input-token estimate of a request (about four characters a token). */
export function estimateInputTokens(messages: readonly Message[]): number {
  let text = '';
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'tool_call') text += part.arguments;
      else if (part.type === 'tool_result') text += part.content;
    }
  }
  return estimateTokens(text);
}

/** When the provider's headers say a budget is spent, every worker holds back until it resets. */
function holdFromHeaders(completion: Completion, now: number): number {
  const limit = completion.rateLimit;
  if (!limit || limit.resetMs === undefined) return 0;
  const spent = limit.remainingRequests === 0 || limit.remainingTokens === 0;
  return spent ? now + limit.resetMs : 0;
}
