import type { Message } from '../chat/index.js';

/** A rough input-token estimate (about four characters a token) for admission; the reply reconciles it. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Framing a provider adds around each message (role markers, separators), in tokens. */
export const messageOverheadTokens = 4;
/** What an image counts for: providers charge a few hundred to a couple of thousand tokens per image. */
export const imageTokens = 1000;

/**
 * The estimate of one message as the model receives it: its text, tool call names and arguments, tool
 * results (four characters a token), images (a tool result's too) at a flat rate, and a small framing overhead.
 */
export function estimateMessageTokens(message: Message): number {
  let characters = 0;
  let images = 0;
  for (const part of message.parts) {
    if (part.type === 'text') characters += part.text.length;
    else if (part.type === 'tool_call') characters += part.name.length + part.arguments.length;
    else if (part.type === 'tool_result') {
      characters += part.content.length;
      images += part.images?.length ?? 0;
    } else images += 1;
  }
  return Math.ceil(characters / 4) + images * imageTokens + messageOverheadTokens;
}

/** The sum of estimateMessageTokens over messages. */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}
