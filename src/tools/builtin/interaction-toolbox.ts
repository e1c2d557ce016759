import { z } from 'zod';
import { maxQuestionTimeoutS, secondsLimit } from '../../schemas/index.js';
import { charsLimitMessage, interactionLimits as limits } from '../interaction-limits.js';
import { partialResultLimits, partialResultsSchema } from '../partial-results.js';
import { defineTool } from '../tool.js';
import { createToolBox, type ToolBox } from '../toolbox.js';

/** Text a person reads: not empty, and bounded (it is stored, listed by every inbox read and sent in events). */
function boundedText(maxChars: number) {
  return z
    .string()
    .min(1)
    .max(maxChars, { error: charsLimitMessage(maxChars) });
}

const askUser = defineTool({
  name: 'ask_user',
  description:
    'Asks the user a question and waits for the answer (minutes or days: the run resumes when it comes). ' +
    'Give options when the answer is a choice.',
  inputSchema: z.strictObject({
    question: boundedText(limits.questionChars).describe(
      `the question, self-contained (at most ${limits.questionChars} characters)`,
    ),
    options: z
      .array(boundedText(limits.optionChars))
      .max(limits.options, { error: `at most ${limits.options} options; offer fewer` })
      .optional()
      .describe(
        `suggested answers (at most ${limits.options}, each at most ${limits.optionChars} characters)`,
      ),
    timeout_s: z
      .number()
      .positive()
      .max(maxQuestionTimeoutS, { error: `at most ${secondsLimit(maxQuestionTimeoutS)}` })
      .optional()
      .describe(`after this many seconds (at most ${maxQuestionTimeoutS}), \`default\` is the answer`),
    default: z
      .string()
      .max(limits.defaultAnswerChars, { error: charsLimitMessage(limits.defaultAnswerChars) })
      .optional()
      .describe('the answer when the timeout passes'),
  }),
  // The handler only asks: running it again asks the same question and finds its answer.
  idempotent: true,
  handler: async (context, input) =>
    context.ask({
      question: input.question,
      ...(input.options ? { options: input.options } : {}),
      ...(input.timeout_s === undefined ? {} : { timeoutMs: input.timeout_s * 1000 }),
      ...(input.default === undefined ? {} : { defaultAnswer: input.default }),
    }),
});

/**
 * `report_progress`'s input. Its `data` is kept in the run's result metadata (`partial_results`) when the reply
 * that calls it is recorded (src/workflows/core/partial-results.ts), checked against this same schema.
 */
export const reportProgressInputSchema = z.strictObject({
  message: boundedText(limits.progressChars).describe(
    `what has been done or is being done (at most ${limits.progressChars} characters)`,
  ),
  fraction: z.number().min(0).max(1).optional().describe('share of the task done, from 0 to 1'),
  data: partialResultsSchema
    .optional()
    .describe(
      "named intermediate results to keep in the run's result (a name reported again replaces its value; " +
        `at most ${partialResultLimits.names} names, each value at most ${partialResultLimits.valueChars} characters as JSON)`,
    ),
});

const reportProgress = defineTool({
  name: 'report_progress',
  description:
    'Tells the user how far the task has come (a progress event); `data` keeps named intermediate results ' +
    "in the run's result.",
  inputSchema: reportProgressInputSchema,
  idempotent: true,
  handler: async (context, input) => {
    await context.reportProgress({
      message: input.message,
      ...(input.fraction === undefined ? {} : { fraction: input.fraction }),
    });
    return 'progress reported';
  },
});

export const interactionToolboxName = 'interaction';

/** `interaction`: available to every agent after its own toolboxes (its own tools win on a name clash). */
export function interactionToolbox(): ToolBox {
  return createToolBox(interactionToolboxName, [askUser, reportProgress]);
}
