import { z } from 'zod';
import { defineTool } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { evaluateArithmetic } from './arithmetic.js';

const calculate = defineTool({
  name: 'calculate',
  description: 'Evaluates an arithmetic expression with + - * / % ^ and parentheses, e.g. "(2 + 3) * 4".',
  inputSchema: z.strictObject({ expression: z.string().min(1).describe('the expression to evaluate') }),
  idempotent: true,
  handler: async (_context, input) => ({
    expression: input.expression,
    result: evaluateArithmetic(input.expression),
  }),
});

const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts the words and characters of a text.',
  inputSchema: z.strictObject({ text: z.string().describe('the text to count') }),
  idempotent: true,
  handler: async (_context, input) => ({
    words: input.text.split(/\s+/).filter((word) => word !== '').length,
    characters: input.text.length,
  }),
});

/** `utils`: small pure tools, handy for the demo and for smoke tests. */
export function utilsToolbox(): ToolBox {
  return createToolBox('utils', [calculate, wordCount]);
}
