import type { EventData } from '../events/event.js';
import type { QuestionResponse } from '../workflows/index.js';

/** A question as the ask_user event shows it. */
export type AskedQuestion = EventData<'ask_user'>;

export type ParsedAnswer =
  | { status: 'answer'; response: QuestionResponse; shown: string }
  /** Nothing usable was typed: ask again (or, from a pipe, read the next line). */
  | { status: 'again'; problem: string | undefined };

/** The prompt printed before reading an answer. */
export function promptFor(question: AskedQuestion): string {
  if (question.kind === 'approval')
    return '  approve, always (this tool, this session), or reject [reason]? ';
  if (question.options.length > 0) {
    return `  your answer (1-${question.options.length} or text, Enter for "${question.options[0]}"): `;
  }
  return '  your answer: ';
}

/**
 * Reads one typed line as an answer. ask_user: a number picks an option, an empty line takes the first one,
 * anything else is the answer as typed. Approval: `approve` (or a/y/yes), optionally followed by the call's
 * edited arguments as a JSON object, `always` (approve this tool for the rest of the session: a remembered
 * approval), or `reject` (or r/n/no) with an optional reason.
 */
export function parseAnswer(question: AskedQuestion, line: string): ParsedAnswer {
  const text = line.trim();
  if (question.kind === 'approval') return parseApproval(text);
  const first = question.options[0];
  if (text === '') {
    return first === undefined ? { status: 'again', problem: undefined } : answer(first);
  }
  if (/^\d+$/.test(text)) {
    const option = question.options[Number(text) - 1];
    if (option !== undefined) return answer(option);
  }
  return answer(text);
}

/**
 * The answer given when input ends with the question still open: its first option, else "yes"; a budget
 * is never raised without a person ("stop").
 */
export function defaultAnswer(question: AskedQuestion): { response: QuestionResponse; shown: string } {
  if (question.kind === 'approval') return { response: { decision: 'approve' }, shown: 'approve' };
  if (question.kind === 'budget') return { response: 'stop', shown: 'stop' };
  const text = question.options[0] ?? 'yes';
  return { response: text, shown: text };
}

function answer(text: string): ParsedAnswer {
  return { status: 'answer', response: text, shown: text };
}

const approveWords = new Set(['a', 'approve', 'approved', 'y', 'yes', 'ok']);
const rejectWords = new Set(['r', 'reject', 'rejected', 'n', 'no', 'deny']);

function parseApproval(text: string): ParsedAnswer {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text);
  const word = match?.[1]?.toLowerCase() ?? '';
  const rest = match?.[2]?.trim() ?? '';
  if (word === 'always' && rest === '') {
    return {
      status: 'answer',
      response: { decision: 'approve', remember: 'tool' },
      shown: 'approve this tool for this session',
    };
  }
  if (approveWords.has(word)) {
    if (rest === '') return { status: 'answer', response: { decision: 'approve' }, shown: 'approve' };
    let edited: unknown;
    try {
      edited = JSON.parse(rest);
    } catch {
      edited = undefined;
    }
    if (typeof edited !== 'object' || edited === null || Array.isArray(edited)) {
      return {
        status: 'again',
        problem: 'after "approve", give nothing or the edited arguments as a JSON object',
      };
    }
    return {
      status: 'answer',
      response: { decision: 'approve', arguments: edited as Record<string, unknown> },
      shown: `approve with ${JSON.stringify(edited)}`,
    };
  }
  if (rejectWords.has(word)) {
    return {
      status: 'answer',
      response: rest === '' ? { decision: 'reject' } : { decision: 'reject', reason: rest },
      shown: rest === '' ? 'reject' : `reject: ${rest}`,
    };
  }
  return {
    status: 'again',
    problem: text === '' ? undefined : 'answer "approve" or "reject [reason]"',
  };
}
