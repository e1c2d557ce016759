import { RatchetError } from '../../../errors/index.js';
import type { CompletionRequest } from '../../../models/completer.js';
import { costOf } from '../../../models/pricing.js';
import { isContextLengthError, planAfterContextError } from '../../core/effects/index.js';
import { crashPoint } from '../../crash-points.js';
import { journalField } from '../../journal.js';
import { isPark } from '../runner/step-action.js';
import { requestContext } from './model-call.js';
import { modelCallThroughMiddleware } from './model-call-middleware.js';
import { next, type StageResult } from './stage-pipeline.js';
import { streamTextDeltas } from './text-deltas.js';
import type { Turn } from './turn.js';

/**
 * The model call stage: the planned request, within the budget, through the agent's middleware to the model;
 * its reply is what the iteration records. A provider that refuses the request as longer than its context
 * window gets a compaction of everything not yet summarised and the request planned again (reactive
 * compaction); when nothing is left to summarise, the run fails with context_exceeded.
 */
export async function modelCallStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, agent, stored, input, plan } = turn;
  if (!agent || !input || !plan || !turn.withinBudget || turn.reply) return next(turn);
  const n = data.iteration;
  const deltas = agent.stream
    ? streamTextDeltas(context, {
        sessionId: data.session_id,
        runId: data.run_id,
        agent: agent.name,
        iteration: n,
      })
    : undefined;
  const completionRequest: CompletionRequest = {
    messages: plan.messages,
    tools: agent.tools,
    // An agent with an output_schema asks for structured output (where its provider supports it).
    options: agent.outputSchema
      ? { responseFormat: { type: 'json', schema: { ...agent.outputSchema }, name: 'answer' } }
      : {},
    context: requestContext(context, data, agent.name),
    ...(deltas ? { onTextDelta: deltas.onTextDelta } : {}),
  };
  const completion = await modelCallThroughMiddleware(
    context,
    agent,
    completionRequest,
    turn.loaded.modelCallCount ?? journalField.modelCalls(n),
    stored.record,
  ).catch((error: unknown) => {
    if (!isContextLengthError(error)) throw error;
    return planAfterContextError(input);
  });
  if (isPark(completion)) return completion;
  if ('kind' in completion) {
    if (completion.kind === 'fail') throw new RatchetError(completion.code, completion.message);
    context.logger.warn(
      { tokens: completion.tokens },
      'the provider refused the request as too long: compacting',
    );
    return next({ ...turn, compaction: completion, plan: undefined, withinBudget: undefined });
  }
  await deltas?.flush();
  crashPoint('iteration.after_model_call');
  return next({
    ...turn,
    reply: {
      parts: completion.parts,
      usage: completion.usage,
      costUsd: costOf(completion.usage, completion.route.price),
      // A run may have asked for fewer iterations than its agent allows (POST /v1/runs max_iterations).
      maxIterations: Math.min(agent.maxIterations, stored.record.max_iterations ?? Number.POSITIVE_INFINITY),
      ...(completion.rejection ? { rejection: completion.rejection } : {}),
      model: { provider: completion.route.name, model: completion.route.model },
      ...(agent.supervisor ? { supervisor: agent.supervisor } : {}),
      ...(completion.middleware ? { middleware: completion.middleware } : {}),
      effects: {
        inject: plan.inject,
        events: plan.events,
        context: {
          tokens: plan.tokens,
          sent_estimate: plan.sent_estimate,
          input_tokens: completion.usage.input_tokens,
          applied: plan.applied,
          summary_up_to: input.view.summary?.up_to ?? null,
        },
      },
    },
  });
}
