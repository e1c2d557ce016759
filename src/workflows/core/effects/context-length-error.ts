import { RatchetError } from '../../../errors/index.js';

/**
 * How providers say a request is longer than the model's context window:
 * - OpenAI (and servers copying its API): code `context_length_exceeded`, "This model's maximum context
 *   length is N tokens...";
 * - Anthropic: "prompt is too long: N tokens > M maximum", "input length and `max_tokens` exceed context
 *   limit";
 * - Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)";
 * - local OpenAI-compatible servers: vLLM says it like OpenAI, llama.cpp "exceeds the available context
 *   size".
 */
const contextLengthPatterns: readonly RegExp[] = [
  /context_length_exceeded/i,
  /maximum context length/i,
  /prompt is too long/i,
  /exceed(?:s|ed)? (?:the )?context (?:limit|window)/i,
  /input token count.{0,40}exceeds the maximum/i,
  /exceeds the maximum number of tokens/i,
  /exceeds the available context size/i,
];

/** Only the start of a body is read: provider error bodies are short, and a hostile one must not cost. */
const textLimit = 16_384;
const depthLimit = 8;

/**
 * Whether an error says the request did not fit the model's context window: a RatchetError from a
 * provider (its message, details and cause chain, the provider package's response body included), an
 * error the provider package threw, or the text of an error body. Rate limits are never context errors,
 * even when their message talks about tokens.
 */
export function isContextLengthError(error: unknown): boolean {
  if (error instanceof RatchetError && error.code === 'model_rate_limited') return false;
  if (typeof error === 'object' && error !== null && (error as { statusCode?: unknown }).statusCode === 429) {
    return false;
  }
  return textsOf(error, 0, new Set()).some((text) =>
    contextLengthPatterns.some((pattern) => pattern.test(text.slice(0, textLimit))),
  );
}

/** The texts an error carries: its message, code, type, response body, data and cause, recursively. */
function textsOf(value: unknown, depth: number, seen: Set<unknown>): string[] {
  if (depth > depthLimit || value === null || value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  const record = value as Record<string, unknown>;
  const texts: string[] = [];
  for (const key of ['message', 'code', 'type', 'status', 'responseBody']) {
    const field = record[key];
    if (typeof field === 'string') texts.push(field);
  }
  for (const key of ['error', 'data', 'details', 'cause']) {
    texts.push(...textsOf(record[key], depth + 1, seen));
  }
  return texts;
}
