import type { Message } from '../../../chat/index.js';
import type { ModelCallInput } from '../../core/effects/index.js';
import { journalField } from '../../journal.js';
import { continuationOf } from '../../run-record.js';
import { previousReplyOf, runStartOf } from './context-effects.js';
import { instructionsWithContext, runContextText } from './run-context.js';
import { next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

/**
 * The request stage: what the agent's model is asked from (decision 0013): its instructions with what the
 * run was given at its start, the chat, the chat's context view, the numbers the previous reply recorded and
 * the agent's effects. The plan stage plans the request from it (again after each compaction).
 */
export async function requestStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, loaded, stored, chat, agent } = turn;
  if (!agent || turn.reply) return next(turn);
  const { record } = stored;
  // What the run was given at its start (project context, memory), recorded once: the same on every request.
  const runContext = await runContextText(context, agent, record.id);
  const input: ModelCallInput = {
    runId: record.id,
    agent: agent.name,
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
    runStart: runStartOf(chat, continuationOf(record)?.input_run_id ?? record.id),
    view: loaded.view,
    contextWindow: agent.provider.contextWindow,
    ...previousReplyOf(
      loaded.previousReply,
      `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`,
    ),
    effects: agent.effects,
  };
  return next({ ...turn, input });
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
