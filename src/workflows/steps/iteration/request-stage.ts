import type { Message } from '../../../chat/index.js';
import type { ModelCallInput } from '../../core/effects/index.js';
import { crashPoint } from '../../crash-points.js';
import { journalField } from '../../journal.js';
import type { StepAction } from '../runner/step-action.js';
import { budgetStage } from './budget-stage.js';
import {
  type CompactionDecision,
  compact,
  planRequest,
  previousRequestOf,
  runStartOf,
} from './context-effects.js';
import { modelCallStage } from './model-call-stage.js';
import { instructionsWithContext, runContextText } from './run-context.js';
import type { RequestState, Turn } from './turn.js';

/**
 * The request stage: what the model is sent, planned by the agent's effects from persisted data (decision
 * 0013); a compaction first when one is due (a commit of its own), then the budget stage and the model call.
 */
export async function requestStage(turn: Turn): Promise<StepAction> {
  const { context, data, loaded, stored, chat, agent } = turn;
  const { record } = stored;
  // What the run was given at its start (project context, memory), recorded once: the same on every request.
  const runContext = await runContextText(context, agent, record.id);
  const input: ModelCallInput = {
    runId: record.id,
    iteration: data.iteration,
    now: context.services.now().toISOString(),
    system: systemMessage(
      instructionsWithContext(agent.instructions, runContext),
      record.id,
      record.created_at,
    ),
    chat,
    // A retry or a fork has no input of its own (a fork may): its part of the chat starts at the input of
    // the run it continues.
    runStart: runStartOf(chat, record.origin?.input_run_id ?? record.id),
    view: loaded.view,
    contextWindow: agent.provider.contextWindow,
    previous: previousRequestOf(
      loaded.previousReply,
      `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`,
    ),
    effects: agent.effects,
  };
  return sendRequest({ context, data, loaded, agent, stored, input });
}

function systemMessage(instructions: string, runId: string, createdAt: string): Message[] {
  if (instructions.trim() === '') return [];
  return [
    {
      id: `${runId}-system`,
      sender: 'system',
      role: 'system',
      parts: [{ type: 'text', text: instructions }],
      metadata: {},
      created_at: createdAt,
    },
  ];
}

/**
 * The request the agent's effects plan (a compaction first when one is due), within the budget, then the
 * model call. Called again with the new view after each compaction.
 */
function sendRequest(request: RequestState): Promise<StepAction> {
  const plan = planRequest(request.input);
  if (plan.kind === 'compact') return compactThenSend(request, plan);
  crashPoint('iteration.before_model_call');
  return budgetStage(request, plan.messages, (within) =>
    modelCallStage(within, plan, (decision) => compactThenSend(within, decision)),
  );
}

/** A compaction, then the request planned again from the new view. */
function compactThenSend(request: RequestState, decision: CompactionDecision): Promise<StepAction> {
  const { context, data, agent, stored, input } = request;
  return compact(context, data, agent, stored, input, decision, (after, view) =>
    sendRequest({ ...request, stored: after, input: { ...input, view } }),
  );
}
