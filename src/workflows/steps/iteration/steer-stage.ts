import { RatchetError } from '../../../errors/index.js';
import { journalField } from '../../journal.js';
import { steerCommit } from '../../pending-message.js';
import { done } from '../runner/step-action.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

/**
 * The steer stage (commit `steered:<n>`, decision 0032): the messages steered into the run since its last
 * model call join its chat as user messages, in the order they were accepted, before this iteration's
 * request is planned: at an iteration boundary, after the previous batch's results, never inside a batch.
 * Once per iteration: a repeated execution finds the journal field and goes on with the chat that holds
 * them; messages steered after this commit wait for the next iteration.
 */
export function steerStage(turn: Turn): StageResult<Turn> {
  const { context, data, loaded, stored } = turn;
  if (loaded.reply || loaded.steeredDone || loaded.steered.length === 0) return next(turn);
  const now = context.services.now().toISOString();
  const chatLength = turn.chat.length;
  const plan = steerCommit({
    run: stored.record,
    iteration: data.iteration,
    steered: loaded.steered,
    chatLength,
    now,
  });
  return commitThen(
    {
      op: 'steer',
      request: {
        journalField: journalField.steered(data.iteration),
        journal: plan.journal,
        steeredIds: plan.journal.ids,
        expectedChatLength: chatLength,
        messages: plan.messages,
        events: plan.events,
      },
    },
    {
      what: 'appending steered messages',
      before: 'iteration.before_steer_commit',
      after: 'iteration.after_steer_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        // `done`: an earlier execution appended them, and its chat is read again from the start.
        if (result.status === 'done' || result.status === 'conflict') {
          throw new RatchetError(
            'internal',
            `appending steered messages to ${data.run_id}: ${result.status === 'done' ? 'appended by an earlier execution' : `the ${result.what} changed`}; the step runs again`,
          );
        }
        if (result.status !== 'ok')
          throw new RatchetError('internal', `appending steered messages: ${JSON.stringify(result)}`);
        return next({ ...turn, chat: [...turn.chat, ...plan.messages] });
      },
    },
  );
}
