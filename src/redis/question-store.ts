import { RatchetError } from '../errors/index.js';
import { buildEvent } from '../events/event.js';
import { parseJsonRecord } from '../schemas/parse.js';
import {
  type AnswerResult,
  type QuestionRecord,
  type QuestionResponse,
  questionRecordSchema,
} from '../workflows/question-record.js';
import {
  maxRememberedApprovals,
  type RememberedApproval,
  rememberedApprovalSchema,
} from '../workflows/remembered-approval-match.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, runKeys, sessionDataKeys, sessionKeys } from './keys.js';
import { encodeEvent } from './run-store.js';
import { runScript } from './scripts.js';

export function parseQuestion(text: string, id: string): QuestionRecord {
  return parseJsonRecord(questionRecordSchema, text, `question ${id}`);
}

export async function readQuestion(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  questionId: string,
): Promise<{ record: QuestionRecord; text: string } | undefined> {
  const text = await redis.hget(sessionKeys(space, sessionId).questions, questionId);
  return text ? { record: parseQuestion(text, questionId), text } : undefined;
}

/** The pending questions of a session, oldest first. */
export async function pendingQuestions(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
): Promise<QuestionRecord[]> {
  const keys = sessionKeys(space, sessionId);
  const ids = await redis.smembers(keys.pending);
  if (ids.length === 0) return [];
  const texts = await redis.hmget(keys.questions, ...ids);
  return texts
    .flatMap((text, index) => (text ? [parseQuestion(text, ids[index] ?? '?')] : []))
    .filter((question) => question.status === 'pending')
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

/**
 * Closes the pending questions of a finished run (status `cancelled`): nobody can answer them any more, and
 * they leave the session's list. Plain writes suffice: an answer to a finished run's question is refused.
 */
export async function closeQuestionsOfRun(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
): Promise<void> {
  const keys = sessionKeys(space, sessionId);
  const open = (await pendingQuestions(redis, space, sessionId)).filter(
    (question) => question.run_id === runId,
  );
  if (open.length === 0) return;
  await runScript(
    redis,
    'close-questions',
    [keys.questions, keys.pending, keys.runIndex],
    open.flatMap((question) => [question.id, JSON.stringify({ ...question, status: 'cancelled' })]),
  );
}

/** Answers a pending question once (compare-and-set on the question as read). */
export async function answerQuestion(
  redis: RedisClient,
  space: KeySpace,
  options: {
    sessionId: string;
    questionId: string;
    response: QuestionResponse | ((question: QuestionRecord) => QuestionResponse);
    by: 'user' | 'timeout';
    now: string;
    eventsMaxLength: number;
    /** The approval the answer remembers, written with it (decision 0046). */
    remember?: RememberedApproval;
  },
): Promise<{ result: AnswerResult; question?: QuestionRecord }> {
  const keys = sessionKeys(space, options.sessionId);
  for (let tries = 0; tries < 5; tries += 1) {
    const current = await readQuestion(redis, space, options.sessionId, options.questionId);
    if (!current) return { result: 'not_found' };
    if (current.record.status !== 'pending') return { result: 'closed', question: current.record };
    const response =
      typeof options.response === 'function' ? options.response(current.record) : options.response;
    const answered: QuestionRecord = {
      ...current.record,
      status: options.by === 'user' ? 'answered' : 'timed_out',
      answer: response,
      answered_by: options.by,
      answered_at: options.now,
    };
    const event = buildEvent(
      'question_answered',
      { id: current.record.run_id, agent: current.record.agent },
      { question_id: current.record.id, answered_by: options.by, answer: response },
      options.now,
    );
    const [code] = await runScript(
      redis,
      'answer-question',
      [
        keys.questions,
        keys.pending,
        keys.events,
        runKeys(space, options.sessionId, current.record.run_id).run,
        keys.runIndex,
        sessionDataKeys(space, options.sessionId).approvals,
      ],
      [
        options.questionId,
        current.text,
        JSON.stringify(answered),
        encodeEvent(event),
        options.eventsMaxLength,
        options.remember?.key ?? '',
        options.remember ? JSON.stringify(options.remember) : '',
        maxRememberedApprovals,
      ],
    );
    if (code === 'TOO_MANY') {
      throw new RatchetError(
        'invalid_response',
        `remember: session ${options.sessionId} already holds ${maxRememberedApprovals} remembered approvals; revoke some (DELETE /v1/sessions/:id/approvals/:key) or answer without remember`,
        { details: { question_id: options.questionId, field: 'remember' } },
      );
    }
    if (code === 'OK') return { result: 'answered', question: answered };
    if (code === 'NOT_FOUND') return { result: 'not_found' };
    if (code === 'CLOSED') return { result: 'closed', question: current.record };
    if (code === 'RUN_FINISHED') return { result: 'run_finished', question: current.record };
  }
  throw new RatchetError('internal', `question ${options.questionId} kept changing while it was answered`);
}

/** The remembered approvals of a session (decision 0046), oldest first. */
export async function readRememberedApprovals(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
): Promise<RememberedApproval[]> {
  const all = await redis.hgetall(sessionDataKeys(space, sessionId).approvals);
  return Object.entries(all)
    .map(([key, text]) => parseJsonRecord(rememberedApprovalSchema, text, `remembered approval ${key}`))
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.key.localeCompare(b.key));
}

/** Revokes one remembered approval of a session: false when there is none by that key. */
export async function revokeRememberedApproval(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  key: string,
): Promise<boolean> {
  return (await redis.hdel(sessionDataKeys(space, sessionId).approvals, key)) === 1;
}
