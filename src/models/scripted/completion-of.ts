import type { Part } from '../../chat/index.js';
import type { Completion, CompletionRequest, ToolDefinition } from '../completer.js';
import type { Usage } from '../usage.js';
import type { ScriptedReply } from './script-schema.js';

/**
 * Turns a scripted reply into a Completion. Tool calls without an id get `call_<position>_<index>`: stable
 * across retries and processes, and unique within a chat because the position grows with it.
 */
export function completionOf(reply: ScriptedReply, position: number, request: CompletionRequest): Completion {
  const parts: Part[] = [];
  if (reply.text !== undefined) parts.push({ type: 'text', text: reply.text });
  (reply.tool_calls ?? []).forEach((call, index) => {
    parts.push({
      type: 'tool_call',
      id: call.id ?? `call_${position}_${index}`,
      name: call.name,
      arguments: call.arguments_raw ?? JSON.stringify(call.arguments ?? {}),
    });
  });
  return { parts, usage: usageOf(reply, parts, request) };
}

function usageOf(reply: ScriptedReply, parts: readonly Part[], request: CompletionRequest): Usage {
  if (reply.usage) {
    return {
      input_tokens: reply.usage.input_tokens,
      output_tokens: reply.usage.output_tokens,
      cached_input_tokens: reply.usage.cached_input_tokens ?? 0,
      requests: 1,
    };
  }
  const requestChars =
    request.messages.reduce((sum, message) => sum + partsChars(message.parts), 0) + toolsChars(request.tools);
  return {
    input_tokens: estimateTokens(requestChars),
    output_tokens: estimateTokens(partsChars(parts)),
    cached_input_tokens: 0,
    requests: 1,
  };
}

/** Characters of the tool definitions sent, by list: an agent's list is the same object from call to call. */
const toolsCharsOf = new WeakMap<readonly ToolDefinition[], number>();

function toolsChars(tools: readonly ToolDefinition[]): number {
  if (tools.length === 0) return 0;
  let chars = toolsCharsOf.get(tools);
  if (chars === undefined) {
    chars = JSON.stringify(tools).length;
    toolsCharsOf.set(tools, chars);
  }
  return chars;
}

/** The usual rough rule for English text: about four characters a token. */
function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function partsChars(parts: readonly Part[]): number {
  let chars = 0;
  for (const part of parts) {
    if (part.type === 'text') chars += part.text.length;
    else if (part.type === 'tool_call') chars += part.name.length + part.arguments.length;
    else if (part.type === 'tool_result') chars += part.content.length;
  }
  return chars;
}
