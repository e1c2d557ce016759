import type { ToolCallPart } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import { describeIssues } from '../schemas/index.js';
import { redactSecrets } from '../secrets/index.js';
import type { Tool, ToolContext } from './tool.js';
import { splitToolOutput, type ToolOutcome } from './tool-result.js';

export type PreparedCall = { ok: true; tool: Tool; input: unknown } | { ok: false; outcome: ToolOutcome };

/**
 * Checks a model's tool call before anything runs: the tool exists, the arguments are JSON, and they fit
 * the schema. A failure is an error result for the model, never an exception.
 */
export function prepareToolCall(
  call: Pick<ToolCallPart, 'name' | 'arguments'>,
  tool: Tool | undefined,
  availableNames: readonly string[],
): PreparedCall {
  if (!tool) {
    const known = availableNames.length > 0 ? availableNames.join(', ') : '(none)';
    return errorOutcome(`unknown tool "${call.name}". Available tools: ${known}.`);
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return errorOutcome(
      `invalid arguments for tool "${tool.name}": not valid JSON (${(error as Error).message}). ` +
        'Send the arguments as a JSON object.',
    );
  }
  const parsed = tool.inputSchema.safeParse(raw);
  if (!parsed.success) {
    return errorOutcome(`invalid arguments for tool "${tool.name}": ${describeIssues(parsed.error.issues)}`);
  }
  return { ok: true, tool, input: parsed.data };
}

/**
 * Runs the handler; an exception becomes an error result. Aborts propagate so the step can stop. Secrets
 * are removed from what comes back, error or not: it is recorded, and shown to a model that may be steered
 * into sending it anywhere.
 */
export async function runToolHandler(tool: Tool, input: unknown, context: ToolContext): Promise<ToolOutcome> {
  try {
    const { text, images } = splitToolOutput(await tool.handler(context, input));
    return { content: redactSecrets(text), isError: false, ...(images.length > 0 ? { images } : {}) };
  } catch (error) {
    // A handler waiting for a person, a cancelled run or a lost lock is not the tool's failure.
    if (context.signal.aborted || isStepControl(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return { content: redactSecrets(`tool "${tool.name}" failed: ${message}`), isError: true };
  }
}

/** A cancelled run, a lost lock or a handler waiting to be parked: not a failure of the tool. */
export function isStepControl(error: unknown): boolean {
  return error instanceof RatchetError && ['suspended', 'cancelled', 'lock_lost'].includes(error.code);
}

function errorOutcome(content: string): PreparedCall {
  return { ok: false, outcome: { content, isError: true } };
}
