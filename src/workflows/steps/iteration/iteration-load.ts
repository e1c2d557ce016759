import { parseJsonRecord } from '../../../schemas/parse.js';
import type { IterationJobData } from '../../job-data.js';
import { journalField, replyEntrySchema } from '../../journal.js';
import type { StepContext } from '../runner/step-context.js';
import type { LoadedIteration } from './turn.js';

/**
 * One round trip: the run, the journal fields this iteration needs, and the chat. It counts the model call
 * the execution is about to make (decision 0054) unless the run is in a handoff group, whose member in control
 * may be a team replying through a child run, without a call.
 */
export async function loadIteration(context: StepContext, data: IterationJobData): Promise<LoadedIteration> {
  const n = data.iteration;
  const fields = [
    journalField.reply(n),
    journalField.reply(n - 1),
    journalField.results(n - 1),
    journalField.modelCalls(n),
    journalField.upgradeRequest,
    journalField.steered(n),
  ];
  for (let index = 0; index < data.previous_calls; index += 1)
    fields.push(journalField.toolEntry(n - 1, index));
  const countField = data.group === undefined ? journalField.modelCalls(n) : undefined;
  const { run, journal, counted, chat, view, steered } = await context.store.loadIteration(
    fields,
    countField,
  );
  const [reply, previousReply, results, modelCalls, upgradeRequest, steeredDone, ...pendingResults] = journal;
  const where = (field: string | undefined) => `journal ${field} of ${data.run_id}`;
  return {
    run,
    reply: reply ? parseJsonRecord(replyEntrySchema, reply, where(fields[0])) : undefined,
    previousReply: previousReply ?? null,
    resultsDone: results !== null && results !== undefined,
    modelCalls: Number(modelCalls ?? 0),
    modelCallCount:
      counted && countField !== undefined
        ? { field: countField, before: Number(modelCalls ?? 0), unused: true }
        : undefined,
    upgradeRequestedAt: upgradeRequest ?? null,
    steeredDone: steeredDone !== null && steeredDone !== undefined,
    steered,
    pendingResults,
    chat,
    view,
  };
}
