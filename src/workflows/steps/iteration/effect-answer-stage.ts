import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { effectAnswerCommit } from '../../core/effect-answer.js';
import { messageId, questionIdOf } from '../../ids.js';
import { journalField, replyEntrySchema } from '../../journal.js';
import { done, isPark } from '../runner/step-action.js';
import { effectQuestionAnswer } from '../tool/tool-interaction.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

/**
 * The effect-answer stage (commit `effect-answer:<n>`, decision 0049): when an effect's after phase asked the
 * person a question about the previous reply (recorded with it, `after.ask`), this iteration asks it — once,
 * as ask_user asks, the step parked until the answer comes — and adds the answer to the chat as the user's
 * message before its request is planned. A repeated execution finds the message in the chat and goes on.
 */
export async function effectAnswerStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, loaded } = turn;
  // Most replies asked nothing: the entry is parsed (a step's hot path) only when it may hold a question.
  if (loaded.reply || loaded.previousReply === null || !loaded.previousReply.includes('"ask":'))
    return next(turn);
  const where = `journal ${journalField.reply(data.iteration - 1)} of ${data.run_id}`;
  const asked = parseJsonRecord(replyEntrySchema, loaded.previousReply, where).after?.ask;
  if (!asked) return next(turn);
  const id = messageId.effectAnswer(data.run_id, data.iteration - 1);
  if (turn.chat.some((message) => message.id === id)) return next(turn);
  const answer = await effectQuestionAnswer(context, data, asked);
  if (isPark(answer)) return answer;
  const chatLength = turn.chat.length;
  const plan = effectAnswerCommit({
    run: turn.stored.record,
    iteration: data.iteration,
    asked,
    questionId: questionIdOf.effect(context.jobId),
    answer,
    chatLength,
    now: context.services.now().toISOString(),
  });
  return commitThen(
    {
      op: 'run',
      request: {
        journalField: journalField.effectAnswer(data.iteration),
        plan,
        expectedChatLength: chatLength,
      },
    },
    {
      what: "adding the answer to an effect's question",
      before: 'iteration.before_effect_answer_commit',
      after: 'iteration.after_effect_answer_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status === 'ok') return next({ ...turn, chat: [...turn.chat, ...plan.messages] });
        // `done`: an earlier execution added it; `conflict`: the chat moved. The step reads it again.
        throw new RatchetError(
          'internal',
          `adding the answer to an effect's question to ${data.run_id}: ${JSON.stringify(result)}; the step runs again`,
          { retryable: true },
        );
      },
    },
  );
}
