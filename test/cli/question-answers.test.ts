import { describe, expect, it } from 'vitest';
import { type AskedQuestion, defaultAnswer, parseAnswer, promptFor } from '../../src/cli/question-answers.js';

const choice: AskedQuestion = {
  question_id: 'q1',
  kind: 'ask_user',
  question: 'Digits or words?',
  options: ['digits', 'words'],
  tool: null,
  timeout_at: null,
};
const open: AskedQuestion = { ...choice, question: 'Your name?', options: [] };
const approval: AskedQuestion = {
  ...choice,
  kind: 'approval',
  question: 'Run charge_card?',
  options: ['approve', 'reject'],
  tool: { name: 'charge_card', tool_call_id: 'c1', arguments: '{"amount":5}' },
};

describe('parseAnswer', () => {
  it('picks an option by number, takes the first on an empty line, else the text as typed', () => {
    expect(parseAnswer(choice, '2')).toEqual({ status: 'answer', response: 'words', shown: 'words' });
    expect(parseAnswer(choice, '  ')).toEqual({ status: 'answer', response: 'digits', shown: 'digits' });
    expect(parseAnswer(choice, ' roman numerals ')).toMatchObject({ response: 'roman numerals' });
    expect(parseAnswer(choice, '3')).toMatchObject({ response: '3' });
  });

  it('asks again on an empty line when there is nothing to default to', () => {
    expect(parseAnswer(open, '')).toEqual({ status: 'again', problem: undefined });
    expect(parseAnswer(open, 'Ada')).toMatchObject({ response: 'Ada' });
  });

  it('reads approvals: approve, approve with edited arguments, reject with a reason', () => {
    expect(parseAnswer(approval, 'approve')).toMatchObject({ response: { decision: 'approve' } });
    expect(parseAnswer(approval, 'Y')).toMatchObject({ response: { decision: 'approve' } });
    expect(parseAnswer(approval, 'approve {"amount": 3}')).toMatchObject({
      response: { decision: 'approve', arguments: { amount: 3 } },
    });
    expect(parseAnswer(approval, 'reject')).toMatchObject({ response: { decision: 'reject' } });
    expect(parseAnswer(approval, 'reject  too expensive ')).toMatchObject({
      response: { decision: 'reject', reason: 'too expensive' },
      shown: 'reject: too expensive',
    });
    expect(parseAnswer(approval, 'n')).toMatchObject({ response: { decision: 'reject' } });
    expect(parseAnswer(approval, ' always ')).toEqual({
      status: 'answer',
      response: { decision: 'approve', remember: 'tool' },
      shown: 'approve this tool for this session',
    });
    expect(parseAnswer(approval, 'always {"amount": 3}')).toMatchObject({ status: 'again' });
  });

  it('refuses what is neither, and edited arguments that are not a JSON object', () => {
    expect(parseAnswer(approval, 'maybe')).toEqual({
      status: 'again',
      problem: 'answer "approve" or "reject [reason]"',
    });
    expect(parseAnswer(approval, 'approve [1]')).toMatchObject({ status: 'again' });
    expect(parseAnswer(approval, 'approve {oops')).toMatchObject({ status: 'again' });
    expect(parseAnswer(approval, '')).toEqual({ status: 'again', problem: undefined });
  });
});

describe('defaultAnswer (end of input)', () => {
  it('is the first option, else "yes"; an approval is approved', () => {
    expect(defaultAnswer(choice)).toEqual({ response: 'digits', shown: 'digits' });
    expect(defaultAnswer(open)).toEqual({ response: 'yes', shown: 'yes' });
    expect(defaultAnswer(approval)).toEqual({ response: { decision: 'approve' }, shown: 'approve' });
  });

  it('never raises a budget without a person: "stop"', () => {
    const budget: AskedQuestion = { ...choice, kind: 'budget', options: ['raise', 'stop'] };
    expect(defaultAnswer(budget)).toEqual({ response: 'stop', shown: 'stop' });
  });
});

describe('promptFor', () => {
  it('says what may be typed', () => {
    expect(promptFor(choice)).toBe('  your answer (1-2 or text, Enter for "digits"): ');
    expect(promptFor(open)).toBe('  your answer: ');
    expect(promptFor(approval)).toBe('  approve, always (this tool, this session), or reject [reason]? ');
  });
});
