import { decodeChatEntry, type Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { resultsCommit, toolResultMessage } from '../../core/run-commits.js';
import type { IterationJobData } from '../../job-data.js';
import { journalField, replyEntrySchema } from '../../journal.js';
import { done } from '../runner/step-action.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { LoadedIteration, Turn } from './turn.js';

/**
 * The results stage (commit `results:<n-1>`, decision 0010), only when no outcome commit appended the previous
 * iteration's tool results (a tool job was lost without recording anything and the run was driven on): what
 * is there, and an error result for what is not. The iteration goes on with the chat that holds them.
 */
export function resultsStage(turn: Turn): StageResult<Turn> {
  const { context, data, loaded, stored } = turn;
  if (data.previous_calls === 0 || loaded.resultsDone) return next(turn);
  const now = context.services.now().toISOString();
  const plan = resultsCommit({
    run: stored.record,
    messages: fallbackResults(data, loaded, now),
    chatLength: loaded.chat.length,
    now,
  });
  return commitThen(
    {
      op: 'run',
      request: {
        journalField: journalField.results(data.iteration - 1),
        plan,
        expectedChatLength: loaded.chat.length,
      },
    },
    {
      what: 'appending tool results',
      before: 'iteration.before_results_commit',
      after: 'iteration.after_results_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status !== 'ok')
          throw new RatchetError('internal', `appending tool results: ${JSON.stringify(result)}`);
        return next({ ...turn, chat: [...loaded.chat, ...plan.messages] });
      },
    },
  );
}

/** The results of the previous iteration's calls: the recorded ones, and an error result for each lost one. */
function fallbackResults(data: IterationJobData, loaded: LoadedIteration, now: string): Message[] {
  const previous = loaded.previousReply
    ? parseJsonRecord(
        replyEntrySchema,
        loaded.previousReply,
        `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`,
      )
    : undefined;
  if (!previous) {
    throw new RatchetError(
      'record_invalid',
      `iteration ${data.iteration - 1} of ${data.run_id} has no recorded reply`,
    );
  }
  return previous.tool_calls.map((call, index) => {
    const entry = loaded.pendingResults[index];
    if (entry) return decodeChatEntry(entry, `pending result ${index} of ${data.run_id}`);
    return toolResultMessage({
      runId: data.run_id,
      iteration: data.iteration - 1,
      index,
      call,
      content: `the call of tool "${call.name}" could not be completed (its job ended without an outcome)`,
      isError: true,
      now,
    });
  });
}
