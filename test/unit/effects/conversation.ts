import { emptyContextView, type Message, type Part } from '../../../src/chat/index.js';
import type { ModelCallInput } from '../../../src/workflows/core/effects/index.js';

export const runId = 'run_abc_123';
export const now = '2026-01-01T00:00:00.000Z';

function at(second: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
}

export function userMessage(id: string, text: string): Message {
  return {
    id,
    sender: 'user',
    role: 'user',
    parts: [{ type: 'text', text }],
    metadata: {},
    created_at: at(0),
  };
}

export const systemPrompt: Message = {
  id: `${runId}-system`,
  sender: 'system',
  role: 'system',
  parts: [{ type: 'text', text: 'You are careful.' }],
  metadata: {},
  created_at: at(0),
};

export interface Turn {
  tool: string;
  arguments?: string;
  result: string;
  isError?: boolean;
  /** Text the assistant writes beside the call. */
  text?: string;
}

/**
 * A scripted run: the user's task, then one iteration per turn (an assistant reply with one tool call and
 * the call's result), with the ids the engine gives them.
 */
export function conversation(task: string, turns: readonly Turn[]): Message[] {
  const chat: Message[] = [userMessage(`${runId}-in`, task)];
  turns.forEach((turn, index) => {
    const iteration = index + 1;
    const callId = `call_${iteration}`;
    const parts: Part[] = [];
    if (turn.text !== undefined) parts.push({ type: 'text', text: turn.text });
    parts.push({ type: 'tool_call', id: callId, name: turn.tool, arguments: turn.arguments ?? '{}' });
    chat.push({
      id: `${runId}-i${iteration}-a`,
      sender: 'agent',
      role: 'assistant',
      parts,
      metadata: { iteration },
      created_at: at(iteration * 2),
    });
    chat.push({
      id: `${runId}-i${iteration}-r0`,
      sender: turn.tool,
      role: 'tool',
      parts: [
        { type: 'tool_result', tool_call_id: callId, content: turn.result, is_error: turn.isError ?? false },
      ],
      metadata: { iteration },
      created_at: at(iteration * 2 + 1),
    });
  });
  return chat;
}

/** The input of the next iteration's plan for `chat`, with no effects unless given. */
export function planInput(chat: readonly Message[], overrides: Partial<ModelCallInput> = {}): ModelCallInput {
  return {
    runId,
    iteration: (chat.length - 1) / 2 + 1,
    now,
    system: [systemPrompt],
    chat,
    runStart: 0,
    view: emptyContextView,
    contextWindow: 0,
    previous: undefined,
    effects: [],
    ...overrides,
  };
}

/** Messages as one line each, the way the tests compare what the model receives. */
export function shown(messages: readonly Message[]): string[] {
  return messages.map((message) => `${message.role}: ${message.parts.map(partLine).join(' | ')}`);
}

function partLine(part: Part): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'tool_call':
      return `→ ${part.name}(${part.arguments})`;
    case 'tool_result':
      return `← ${part.is_error ? 'error ' : ''}${part.content}`;
    case 'image':
      return '[image]';
  }
}
