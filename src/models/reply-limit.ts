import type { Part } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import type { Completer, Completion } from './completer.js';

/**
 * The most characters a model reply may hold (its text and tool-call arguments together) unless its provider
 * entry says otherwise (`max_reply_chars`), and the range an entry may set: far above what a model is asked
 * for (128k output tokens are about 512k characters), low enough that one reply cannot swell a worker or
 * Redis (docs/security.md, "Size bounds on model output").
 */
export const DEFAULT_MAX_REPLY_CHARS = 1_000_000;
export const MIN_MAX_REPLY_CHARS = 1_000;
export const MAX_MAX_REPLY_CHARS = 16_000_000;

/** What a reply's size is measured in: its text and its tool calls' names and arguments, in characters. */
export function replyChars(parts: readonly Part[]): number {
  let chars = 0;
  for (const part of parts) {
    if (part.type === 'text') chars += part.text.length;
    else if (part.type === 'tool_call') chars += part.name.length + part.arguments.length;
  }
  return chars;
}

/**
 * The error of a reply over its provider's `max_reply_chars`, naming the limit and how to raise it. `size`
 * says what was seen: "holds 1200000 characters", or "took more than 7000000 bytes" for a body cut off.
 */
export function replyTooLarge(provider: string, limit: number, size: string, cause?: unknown): RatchetError {
  return new RatchetError(
    'reply_too_large',
    `provider "${provider}": the model's reply ${size}, over the provider's max_reply_chars of ${limit} ` +
      '(text and tool arguments together); it was not read further and not recorded. Ask for shorter ' +
      'replies (max_tokens) or raise providers[].max_reply_chars',
    { details: { provider, max_reply_chars: limit }, ...(cause === undefined ? {} : { cause }) },
  );
}

/**
 * A completer whose replies are checked against the limit, whatever the kind: the engine's own guard, behind
 * the kinds that stop reading a reply as soon as it is over (the AI SDK kinds) and the ones that cannot.
 */
export function withReplyLimit(completer: Completer, provider: string, limit: number): Completer {
  return {
    async complete(request, signal): Promise<Completion> {
      const completion = await completer.complete(request, signal);
      const chars = replyChars(completion.parts);
      if (chars > limit) throw replyTooLarge(provider, limit, `holds ${chars} characters`);
      return completion;
    },
  };
}
