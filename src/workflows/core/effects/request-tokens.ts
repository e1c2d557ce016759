import type { Message } from '../../../chat/index.js';
import { estimateMessagesTokens } from '../../../models/token-estimate.js';

/** What the previous model request of the run was, as the effects saw it and as the provider counted it. */
export interface PreviousRequest {
  /** The input tokens the provider reported for it (usage.input_tokens of the reply). */
  input_tokens: number;
  /** estimateMessagesTokens of the messages it sent (recorded with that iteration's plan). */
  sent_estimate: number;
}

/**
 * The input tokens of a request of `messages`: the provider's count of the previous request, plus the
 * estimate of what changed since (what was added, minus what effects took away from the messages sent
 * then). Without a previous request (the first one, or a provider that reports no usage), the estimate
 * alone. The provider's count covers what the estimate cannot see (tool definitions, its own framing,
 * its tokenizer), so the difference keeps that correction from one request to the next.
 */
export function requestTokens(messages: readonly Message[], previous: PreviousRequest | undefined): number {
  const estimate = estimateMessagesTokens(messages);
  if (previous === undefined || previous.input_tokens <= 0) return estimate;
  return Math.max(0, previous.input_tokens + estimate - previous.sent_estimate);
}
