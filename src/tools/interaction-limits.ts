/**
 * How much a question to a person and a progress report may hold. A question is stored until it is answered
 * (days, maybe), listed by every inbox read (the console polls it every 2 s) and sent in an event; a model
 * writes it, so without a bound 20 questions of 900 KB made one inbox answer 17.7 MB. The bounds are far above
 * what a person reads in one question, and the same for the built-in tools (their schemas) and for
 * `ToolContext.ask` / `reportProgress` called by any tool.
 */
export const interactionLimits = {
  /** Characters of a question (`ask_user`'s `question`). */
  questionChars: 4_000,
  /** Suggested answers of one question. */
  options: 20,
  /** Characters of one suggested answer. */
  optionChars: 200,
  /** Characters of the answer a question gets when its timeout passes. */
  defaultAnswerChars: 4_000,
  /** Characters of a progress message (`report_progress`'s `message`). */
  progressChars: 1_000,
} as const;

/** Why a question cannot be asked (the field, the limit, what to do), or undefined when it fits. */
export function askProblem(ask: { question: string; options?: readonly string[]; defaultAnswer?: string }) {
  const limits = interactionLimits;
  if (ask.question.length > limits.questionChars)
    return tooLong('question', ask.question.length, limits.questionChars);
  if (ask.options !== undefined) {
    if (ask.options.length > limits.options)
      return `options: ${ask.options.length} options, more than the ${limits.options} a question may offer; offer fewer`;
    const long = ask.options.findIndex((option) => option.length > limits.optionChars);
    const option = ask.options[long];
    if (option !== undefined) return tooLong(`options[${long}]`, option.length, limits.optionChars);
  }
  if (ask.defaultAnswer !== undefined && ask.defaultAnswer.length > limits.defaultAnswerChars)
    return tooLong('default', ask.defaultAnswer.length, limits.defaultAnswerChars);
  return undefined;
}

/** Why a progress message cannot be reported, or undefined when it fits. */
export function progressProblem(progress: { message: string }): string | undefined {
  const { message } = progress;
  return message.length > interactionLimits.progressChars
    ? tooLong('message', message.length, interactionLimits.progressChars)
    : undefined;
}

/** The message of a text over its limit, as the tool schemas word it. */
export function charsLimitMessage(limit: number): string {
  return `at most ${limit} characters; shorten it`;
}

function tooLong(field: string, length: number, limit: number): string {
  return `${field}: ${length} characters, ${charsLimitMessage(limit)}`;
}
