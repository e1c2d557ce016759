import { RatchetError } from '../errors/index.js';
import { describeIssues } from '../schemas/index.js';
import type { Tool } from '../tools/index.js';
import { sessionIdOfRun } from './ids.js';
import type { ApprovalAnswer, QuestionRecord, QuestionResponse } from './question-record.js';

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
  if (answer.remember !== undefined && (answer.decision !== 'approve' || answer.arguments !== undefined)) {
    throw new RatchetError(
      'invalid_response',
      'remember goes with decision "approve" and the model\'s own arguments (leave out "arguments")',
      { details: { question_id: question.id, field: 'remember' } },
    );
  }
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

/** The session a question belongs to, from its id (question ids embed their run id). */
export function sessionOfQuestion(questionId: string): string | undefined {
  const match = /^q-(run_[0-9a-z]{16}_[0-9a-z]{10})-/.exec(questionId);
  return match?.[1] ? sessionIdOfRun(match[1]) : undefined;
}
