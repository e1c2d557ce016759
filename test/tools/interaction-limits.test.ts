import { describe, expect, it } from 'vitest';
import { askProblem, interactionLimits, progressProblem } from '../../src/tools/index.js';

// The bounds of ToolContext.ask and reportProgress, which any tool may call with text a model chose (the
// built-in ask_user and report_progress check the same bounds in their schemas).
describe('interaction limits', () => {
  const limits = interactionLimits;

  it('a question, its options and its default answer at their bounds fit', () => {
    expect(
      askProblem({
        question: 'q'.repeat(limits.questionChars),
        options: Array.from({ length: limits.options }, () => 'o'.repeat(limits.optionChars)),
        defaultAnswer: 'd'.repeat(limits.defaultAnswerChars),
      }),
    ).toBeUndefined();
    expect(progressProblem({ message: 'm'.repeat(limits.progressChars) })).toBeUndefined();
  });

  it('one character or one option over names the field, its length and the limit', () => {
    expect(askProblem({ question: 'q'.repeat(900_000) })).toBe(
      `question: 900000 characters, at most ${limits.questionChars} characters; shorten it`,
    );
    expect(
      askProblem({ question: 'q', options: Array.from({ length: limits.options + 1 }, () => 'o') }),
    ).toBe(
      `options: ${limits.options + 1} options, more than the ${limits.options} a question may offer; offer fewer`,
    );
    expect(askProblem({ question: 'q', options: ['a', 'o'.repeat(limits.optionChars + 1)] })).toMatch(
      new RegExp(`^options\\[1\\]: ${limits.optionChars + 1} characters, at most ${limits.optionChars} `),
    );
    expect(askProblem({ question: 'q', defaultAnswer: 'd'.repeat(limits.defaultAnswerChars + 1) })).toMatch(
      /^default: /,
    );
    expect(progressProblem({ message: 'm'.repeat(limits.progressChars + 1) })).toMatch(
      new RegExp(`^message: ${limits.progressChars + 1} characters, at most ${limits.progressChars} `),
    );
  });
});
