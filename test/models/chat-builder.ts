import type { Message, Part } from '../../src/chat/index.js';
import type { CompletionContext, CompletionRequest } from '../../src/models/completer.js';

let counter = 0;

/** A chat message with a unique id and an increasing time. */
export function message(role: Message['role'], sender: string, parts: Part[]): Message {
  counter += 1;
  return {
    id: `msg_${counter}`,
    sender,
    role,
    parts,
    metadata: {},
    created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, counter)).toISOString(),
  };
}

export const system = (text: string): Message => message('system', 'system', [{ type: 'text', text }]);
export const user = (text: string): Message => message('user', 'user', [{ type: 'text', text }]);
export const assistant = (text: string): Message => message('assistant', 'helper', [{ type: 'text', text }]);
export const toolResult = (toolCallId: string, content: string, isError = false): Message =>
  message('tool', 'add', [{ type: 'tool_result', tool_call_id: toolCallId, content, is_error: isError }]);

export function request(
  messages: readonly Message[],
  context: Partial<CompletionContext> = {},
): CompletionRequest {
  return {
    messages,
    tools: [],
    options: {},
    context: {
      sessionId: 'session_1',
      runId: 'run_1',
      agent: 'helper',
      iteration: 1,
      attempt: 1,
      ...context,
    },
  };
}

export const neverAborted = (): AbortSignal => new AbortController().signal;
