import type { Redis } from 'ioredis';
import { RatchetError } from '../errors/index.js';
import { buildEvent } from '../events/event.js';
import { type KeySpace, runKeys, sessionKeys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { describeIssues } from '../schemas/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { Tool } from '../tools/index.js';
import { sessionIdOfRun } from './ids.js';
import {
  type ApprovalAnswer,
  type QuestionRecord,
  type QuestionResponse,
  questionRecordSchema,
} from './question-record.js';
import { encodeEvent } from './store.js';

export function parseQuestion(text: string, id: string): QuestionRecord {
  return parseJsonRecord(questionRecordSchema, text, `question ${id}`);
}

export async function readQuestion(
  redis: Redis,
  space: KeySpace,
  sessionId: string,
  questionId: string,
): Promise<{ record: QuestionRecord; text: string } | undefined> {
  const text = await redis.hget(sessionKeys(space, sessionId).questions, questionId);
  return text ? { record: parseQuestion(text, questionId), text } : undefined;
}

/** The pending questions of a session, oldest first. */
export async function pendingQuestions(
  redis: Redis,
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

const approveWords = new Set(['approve', 'approved', 'yes', 'y', 'ok']);
const rejectWords = new Set(['reject', 'rejected', 'no', 'n', 'deny']);

/**
 * Checks a response against its question: text for ask_user; for approvals a decision (the words approve/yes
 * or reject/no, or {decision, reason, arguments}) whose edited arguments must fit the tool's schema.
 */
export function normalizeResponse(
  question: QuestionRecord,
  response: QuestionResponse,
  tool: Tool | undefined,
): QuestionResponse {
  if (question.kind === 'budget') {
    const word = typeof response === 'string' ? response.trim().toLowerCase() : '';
    if (['raise', 'yes', 'y', 'ok'].includes(word)) return 'raise';
    if (['stop', 'no', 'n'].includes(word)) return 'stop';
    throw new RatchetError('invalid_response', 'a budget question takes "raise" or "stop"', {
      details: { question_id: question.id },
    });
  }
  if (question.kind === 'ask_user') {
    if (typeof response !== 'string') {
      throw new RatchetError('invalid_response', 'this question takes a text response', {
        details: { question_id: question.id, expected: 'string' },
      });
    }
    return response;
  }
  let answer: ApprovalAnswer;
  if (typeof response === 'string') {
    const word = response.trim().toLowerCase();
    if (approveWords.has(word)) answer = { decision: 'approve' };
    else if (rejectWords.has(word)) answer = { decision: 'reject' };
    else {
      throw new RatchetError(
        'invalid_response',
        'an approval takes "approve", "reject" or {decision, reason, arguments}',
        {
          details: { question_id: question.id },
        },
      );
    }
  } else answer = response;
  if (answer.arguments !== undefined) {
    if (answer.decision !== 'approve') {
      throw new RatchetError('invalid_response', 'edited arguments go with decision "approve"', {
        details: { question_id: question.id },
      });
    }
    if (tool) {
      const parsed = tool.inputSchema.safeParse(answer.arguments);
      if (!parsed.success) {
        throw new RatchetError(
          'invalid_response',
          `the edited arguments do not fit tool "${tool.name}": ${describeIssues(parsed.error.issues)}`,
          {
            details: {
              question_id: question.id,
              issues: parsed.error.issues.map((issue) => ({
                path: issue.path.join('.'),
                message: issue.message,
              })),
            },
          },
        );
      }
    }
  }
  return answer;
}

export type AnswerResult = 'answered' | 'not_found' | 'closed' | 'run_finished';

/** Answers a pending question once (compare-and-set on the question as read). */
export async function answerQuestion(
  redis: Redis,
  space: KeySpace,
  options: {
    sessionId: string;
    questionId: string;
    response: QuestionResponse | ((question: QuestionRecord) => QuestionResponse);
    by: 'user' | 'timeout';
    now: string;
    eventsMaxLength: number;
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
      ],
      [
        options.questionId,
        current.text,
        JSON.stringify(answered),
        encodeEvent(event),
        options.eventsMaxLength,
      ],
    );
    if (code === 'OK') return { result: 'answered', question: answered };
    if (code === 'NOT_FOUND') return { result: 'not_found' };
    if (code === 'CLOSED') return { result: 'closed', question: current.record };
    if (code === 'RUN_FINISHED') return { result: 'run_finished', question: current.record };
  }
  throw new RatchetError('internal', `question ${options.questionId} kept changing while it was answered`);
}

/** The session a question belongs to, from its id (question ids embed their run id). */
export function sessionOfQuestion(questionId: string): string | undefined {
  const match = /^q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/.exec(questionId);
  return match?.[1] ? sessionIdOfRun(match[1]) : undefined;
}
