import { RatchetError } from '../../../errors/index.js';
import {
  extensionContext,
  type MiddlewareDecision,
  type ModelReply,
  runModelChain,
} from '../../../extensions/index.js';
import type { Completion, CompletionRequest } from '../../../models/completer.js';
import type { Price } from '../../../models/pricing.js';
import type { AnswerCheckFailure } from '../../core/reply-decision.js';
import type { RunRecord } from '../../run-record.js';
import { isPark, type Park } from '../runner/step-action.js';
import type { AgentRuntime, StepContext } from '../runner/step-context.js';
import { callModel } from './model-call.js';
import type { ModelCallCounter } from './model-call-count.js';

/** A model reply with where it came from and what the middleware decided on the way. */
export interface ModelCallResult extends Completion {
  /** The provider that made the reply: the agent's own, or the one a middleware routed the request to. */
  route: { name: string; model: string; price: Price | undefined };
  /** What the middleware decided (absent when none decided anything): recorded with the reply. */
  middleware?: MiddlewareDecision[];
  /** A middleware rejected this final answer (the output guardrail, or one of the user's). */
  rejection?: AnswerCheckFailure;
}

/** Carries a rate limit's park out through the middleware (as an error of their `next`). */
class RateLimited extends Error {
  constructor(readonly park: Park) {
    super('the model call waits for its provider rate limit');
  }
}

/**
 * An iteration's model call through the agent's middleware (docs/extending.md), the first outermost. An
 * agent without middleware calls its model directly. What the middleware decide comes back with the reply,
 * for the reply's commit; a refusal fails the run (`middleware_refused`, the middleware named).
 *
 * The middleware get only deterministic inputs: the step's ids, the time of the run's last commit, a random
 * seeded with the run, the iteration and their name.
 */
export async function modelCallThroughMiddleware(
  context: StepContext,
  agent: AgentRuntime,
  request: CompletionRequest,
  /** The journal counter of model calls started for this request (retry waste), or the load's count of it. */
  counter: ModelCallCounter,
  run: RunRecord,
): Promise<ModelCallResult | Park> {
  const middleware = agent.middleware?.filter((entry) => entry.definition.aroundModelCall) ?? [];
  if (middleware.length === 0) {
    const completion = await callModel(context, agent, request, counter, run, 'chat');
    if (isPark(completion)) return completion;
    const { name, model, price } = agent.provider;
    return { ...completion, route: { name, model, price } };
  }
  const step = {
    sessionId: run.session_id,
    runId: run.id,
    agent: agent.name,
    iteration: request.context.iteration,
    now: run.updated_at,
  };
  let outcome: Awaited<ReturnType<typeof runModelChain>>;
  try {
    outcome = await runModelChain(
      middleware,
      {
        provider: agent.provider.name,
        messages: request.messages,
        tools: request.tools,
        options: request.options,
      },
      async (sent, signal): Promise<ModelReply> => {
        const routed = routedAgent(agent, sent.provider);
        const completion = await callModel(
          signal === context.signal ? context : { ...context, signal },
          routed,
          { ...request, messages: sent.messages, tools: sent.tools, options: sent.options },
          counter,
          run,
          'chat',
        );
        if (isPark(completion)) throw new RateLimited(completion);
        return { ...completion, provider: routed.provider.name, model: routed.provider.model };
      },
      (name) => extensionContext(name, step),
      { signal: context.signal, logger: context.logger },
    );
  } catch (error) {
    if (error instanceof RateLimited) return error.park;
    throw error;
  }
  if (outcome.kind === 'refused') {
    throw new RatchetError(
      'middleware_refused',
      `middleware "${outcome.by}" refused the model call of iteration ${step.iteration}: ${outcome.reason}`,
    );
  }
  const { reply } = outcome;
  return {
    ...(outcome.kind === 'rejected'
      ? {
          rejection: {
            check: outcome.check,
            reason: outcome.reason,
            on_fail: outcome.maxRetries > 0 ? 'retry' : 'fail',
            max_retries: outcome.maxRetries,
          },
        }
      : {}),
    parts: reply.parts,
    usage: reply.usage,
    route: {
      name: reply.provider,
      model: reply.model,
      price: (agent.providerRoutes?.get(reply.provider)?.provider ?? agent.provider).price,
    },
    ...(outcome.decisions.length > 0 ? { middleware: outcome.decisions } : {}),
  };
}

/** The agent with its requests sent to `provider` (another configured provider a middleware routed to). */
function routedAgent(agent: AgentRuntime, provider: string): AgentRuntime {
  if (provider === agent.provider.name) return agent;
  const route = agent.providerRoutes?.get(provider);
  if (!route) {
    throw new RatchetError(
      'middleware_failed',
      `a middleware of agent "${agent.name}" routed its model request to provider "${provider}", which the config does not define`,
    );
  }
  return { ...agent, completer: route.completer, provider: route.provider };
}
