import type { ToolBox } from '../../../tools/index.js';
import type { ReplyEntry } from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import { runAgent, runGroup } from '../runner/agent-runtime.js';
import type { StepContext } from '../runner/step-context.js';
import { hasNotes } from './next-steps.js';
import { next, type StageResult } from './stage-pipeline.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The remember stage: the notes the effects' after phase asked the agent's memory to keep (decision 0044),
 * written after the reply's commit recorded them. Every execution that gets here writes them again with the
 * same idempotency key, so a note is written once whatever crashes; a run finished by its reply writes them from
 * the step's start (iteration-step.ts), where a repeated step of a finished run ends.
 */
export async function rememberStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, recorded, stored } = turn;
  if (!recorded || !hasNotes(recorded.entry)) return next(turn);
  const { record } = stored;
  const toolboxes =
    turn.agent?.toolboxes ??
    runAgent(
      context.services,
      recorded.sender,
      record.lineage,
      runGroup(context.services, record.agent, turnDefinition(turn))?.name,
      turnDefinition(turn),
      turn.data.inherited,
    ).toolboxes;
  await keepNotes(context, record, turn.data.iteration, recorded.entry, recorded.sender, toolboxes);
  return next(turn);
}

/** Writes the notes a recorded reply asked to keep, each once (its idempotency key names the reply and the effect). */
export async function keepNotes(
  context: StepContext,
  record: Pick<RunRecord, 'id' | 'session_id'>,
  iteration: number,
  entry: ReplyEntry | undefined,
  agent: string,
  toolboxes: readonly ToolBox[],
): Promise<void> {
  if (!hasNotes(entry)) return;
  const keeper = toolboxes.find((toolbox) => toolbox.keepNote !== undefined);
  for (const decision of entry?.after?.decisions ?? []) {
    const note = decision.remember;
    if (!note) continue;
    const problem = keeper?.keepNote
      ? await keeper.keepNote({
          memory: context.store.memory,
          agent,
          sessionId: record.session_id,
          runId: record.id,
          name: note.name,
          content: note.content,
          idempotencyKey: `${record.id}:i${iteration}:after:${decision.effect}`,
          now: context.services.now(),
        })
      : 'the agent has no memory toolbox';
    // The reply is recorded and the run goes on: a note that does not fit is reported, not fatal.
    if (problem !== undefined)
      context.logger.warn(
        { effect: decision.effect, note: note.name, problem },
        'a note the effect asked to remember was not kept',
      );
  }
}
