import type { LanguageModelV4Content, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { Part } from '../../chat/index.js';
import type { Completion } from '../completer.js';
import type { Usage } from '../usage.js';
import { rateLimitStatusOf } from './rate-limit-headers.js';

export interface SdkReply {
  content: readonly LanguageModelV4Content[];
  usage: LanguageModelV4Usage | undefined;
  headers: Readonly<Record<string, string>> | undefined;
}

/**
 * Turns what the provider package returned (or a stream, collected) into a Completion: text and tool calls
 * in the order the model produced them, adjacent text blocks joined as written, tool arguments kept as the
 * raw JSON text (the engine validates them). Reasoning and provider-executed tools are not part of the
 * record.
 */
export function toCompletion(reply: SdkReply, now: number): Completion {
  const parts: Part[] = [];
  for (const item of reply.content) {
    if (item.type === 'text') {
      if (item.text === '') continue;
      const last = parts.at(-1);
      if (last?.type === 'text') last.text += item.text;
      else parts.push({ type: 'text', text: item.text });
    } else if (item.type === 'tool-call' && item.providerExecuted !== true) {
      parts.push({ type: 'tool_call', id: item.toolCallId, name: item.toolName, arguments: item.input });
    }
  }
  const completion: Completion = { parts, usage: usageOf(reply.usage) };
  const rateLimit = rateLimitStatusOf(reply.headers, now);
  if (rateLimit !== undefined) completion.rateLimit = rateLimit;
  return completion;
}

/**
 * `input_tokens` counts every input token, cached or not (the SDK's total: Anthropic's cache reads and writes
 * included); `cached_input_tokens` is the part of them read from the provider's prompt cache.
 */
function usageOf(usage: LanguageModelV4Usage | undefined): Usage {
  const input = usage?.inputTokens;
  const cached = input?.cacheRead ?? 0;
  const inputTotal =
    input?.total ??
    (input?.noCache === undefined ? undefined : input.noCache + cached + (input.cacheWrite ?? 0)) ??
    0;
  return {
    input_tokens: inputTotal,
    output_tokens: usage?.outputTokens.total ?? 0,
    cached_input_tokens: cached,
    requests: 1,
  };
}
