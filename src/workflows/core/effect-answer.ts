import type { Message } from '../../chat/index.js';
import { messageId } from '../ids.js';
import type { AfterReplyEntry } from '../journal.js';
import type { RunRecord } from '../run-record.js';
import { type CommitPlan, messageAddedEvent } from './run-commits.js';

/**
 * The commit that adds the person's answer to an effect's question (decision 0049) to the run's chat, before
 * iteration `iteration`'s request: a user message that says what was asked and what was answered (the model
 * did not ask, so the question is part of what it reads), with its message_added event. The journal field
 * (`effect-answer:<n>`) makes it once; the run record is unchanged.
 */
export function effectAnswerCommit(input: {
  run: RunRecord;
  iteration: number;
  asked: NonNullable<AfterReplyEntry['ask']>;
  questionId: string;
  answer: string;
  chatLength: number;
  now: string;
}): CommitPlan<{ v: 1; at: string }> {
  const { run, iteration, asked, now } = input;
  const message: Message = {
    id: messageId.effectAnswer(run.id, iteration - 1),
    sender: 'user',
    role: 'user',
    parts: [{ type: 'text', text: `Asked: ${asked.question}\nAnswer: ${input.answer}` }],
    metadata: { question_id: input.questionId, effect: asked.effect, iteration: iteration - 1, after: true },
    created_at: now,
  };
  return {
    journal: { v: 1, at: now },
    record: undefined,
    messages: [message],
    events: [messageAddedEvent(run, message, input.chatLength, now)],
    finished: false,
  };
}
