import { decodeChatEntries, decodeChatEntry, type Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { extendChat, knownChatLength } from '../../../redis/chat-cache.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { resultsCommit, toolResultMessage } from '../../core/run-commits.js';
import type { IterationJobData } from '../../job-data.js';
import { journalField, replyEntrySchema } from '../../journal.js';
import { commit, done, type StepAction } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import { decodeView } from './context-effects.js';
import type { LoadedIteration, Stored } from './turn.js';

/** One round trip: the run, the journal fields this iteration needs, and the chat. */
export async function loadIteration(context: StepContext, data: IterationJobData): Promise<LoadedIteration> {
  const chat = context.write.chatKey;
  const n = data.iteration;
  const fields = [
    journalField.reply(n),
    journalField.reply(n - 1),
    journalField.results(n - 1),
    journalField.modelCalls(n),
  ];
  for (let index = 0; index < data.previous_calls; index += 1)
    fields.push(journalField.toolEntry(n - 1, index));
  const from = knownChatLength(chat);
  const { run, journal, entries, chatLength, view } = await context.store.loadIteration(from, fields);
  const [reply, previousReply, results, modelCalls, ...pendingResults] = journal;
  const where = (field: string | undefined) => `journal ${field} of ${data.run_id}`;
  return {
    run,
    reply: reply ? parseJsonRecord(replyEntrySchema, reply, where(fields[0])) : undefined,
    previousReply: previousReply ?? null,
    resultsDone: results !== null && results !== undefined,
    modelCalls: Number(modelCalls ?? 0),
    pendingResults,
    chat: run ? await chatOf(context, chat, from, entries, chatLength) : [],
    view: decodeView(view, `the context view of ${chat}`),
  };
}

/** The whole chat: what this process holds of it, and the entries read after that. */
async function chatOf(
  context: StepContext,
  chat: string,
  from: number,
  entries: readonly string[],
  length: number,
): Promise<Message[]> {
  const extended = extendChat(chat, from, decodeChatEntries(entries, chat, from), length);
  if (extended) return extended;
  // What this process held does not fit the chat any more: read it whole.
  const whole = await context.store.readChat();
  return extendChat(chat, 0, whole, whole.length) ?? whole;
}

/**
 * The first stage's commit (`results:<n-1>`, decision 0010), only when no outcome commit appended the previous
 * iteration's tool results (a tool job was lost without recording anything and the run was driven on): what
 * is there, and an error result for what is not. Then `next` goes on with the chat that holds them.
 */
export function commitFallbackResults(
  context: StepContext,
  data: IterationJobData,
  loaded: LoadedIteration,
  stored: Stored,
  next: (chat: Message[]) => Promise<StepAction>,
): StepAction {
  const now = context.services.now().toISOString();
  const plan = resultsCommit({
    run: stored.record,
    messages: fallbackResults(data, loaded, now),
    chatLength: loaded.chat.length,
    now,
  });
  return commit(
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
        return next([...loaded.chat, ...plan.messages]);
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
