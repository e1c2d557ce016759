import { expect } from 'vitest';
import type { Message, Part } from '../../../src/chat/index.js';
import { RatchetError } from '../../../src/errors/index.js';
import { createLogger } from '../../../src/log/index.js';
import {
  type Completer,
  type CompletionRequest,
  providerKind,
  type ToolDefinition,
} from '../../../src/models/index.js';
import { message } from '../chat-builder.js';

/** A 1×1 PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** The inline image as the OpenAI-style APIs carry it. */
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
export const IMAGE_URL = 'https://example.com/images/cat.png';
export const SYSTEM_PROMPT = 'You are terse. Use tools for arithmetic.';
export const QUESTION = 'What is in this picture? And what are 2+3 and 4+5?';

export const addTool: ToolDefinition = {
  name: 'add',
  description: 'Adds two numbers.',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
};

/** The parts every "reads parallel tool calls" test expects: the text "Adding both." and add(2,3), add(4,5). */
export function parallelAddCallParts(firstId: string, secondId: string): Part[] {
  return [
    { type: 'text', text: 'Adding both.' },
    { type: 'tool_call', id: firstId, name: 'add', arguments: '{"a":2,"b":3}' },
    { type: 'tool_call', id: secondId, name: 'add', arguments: '{"a":4,"b":5}' },
  ];
}

export const systemMessage = (text: string): Message => message('system', 'system', [{ type: 'text', text }]);
export const userMessage = (text: string): Message => message('user', 'user', [{ type: 'text', text }]);

/**
 * The chat every wire test sends: a system prompt; a user turn with text, an image by URL and an inline
 * image; an assistant turn with text and two parallel tool calls; their two results (the second an error),
 * each in its own tool message as the engine records them.
 */
export function toolRoundChat(): Message[] {
  return [
    systemMessage(SYSTEM_PROMPT),
    message('user', 'user', [
      { type: 'text', text: QUESTION },
      { type: 'image', url: IMAGE_URL },
      { type: 'image', data: PNG_BASE64, media_type: 'image/png' },
    ]),
    message('assistant', 'helper', [
      { type: 'text', text: 'A cat. Adding now.' },
      { type: 'tool_call', id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' },
      { type: 'tool_call', id: 'call_2', name: 'add', arguments: '{"a":4,"b":5}' },
    ]),
    message('tool', 'add', [{ type: 'tool_result', tool_call_id: 'call_1', content: '5', is_error: false }]),
    message('tool', 'add', [
      { type: 'tool_result', tool_call_id: 'call_2', content: 'overflow', is_error: true },
    ]),
  ];
}

/** A completed assistant message item of a Responses output that says `text`. */
const messageItem = (id: string, text: string) => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

/** A completed function_call item of a Responses output that calls add with `args`. */
const functionCallItem = (id: string, callId: string, args: string) => ({
  type: 'function_call',
  id,
  call_id: callId,
  name: 'add',
  arguments: args,
  status: 'completed',
});

/** The usage object of a Responses reply. */
const usage = (input: number, cached: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});

/** Responses stream events as server-sent events, each named by its type as the API names them. */
const sse = <Event extends { type: string }>(events: readonly Event[]) =>
  events.map((data) => ({ event: data.type, data }));

/** The stream event that opens an in-progress assistant message item `itemId` at output 0. */
const messageAdded = (itemId: string) => ({
  type: 'response.output_item.added',
  output_index: 0,
  item: { type: 'message', id: itemId, status: 'in_progress', role: 'assistant', content: [] },
});

/** The stream event that carries one text delta of the message item `itemId` at output 0. */
const textDelta = (itemId: string, delta: string) => ({
  type: 'response.output_text.delta',
  item_id: itemId,
  output_index: 0,
  content_index: 0,
  delta,
});

/** The input items a Responses request carries for toolRoundChat() before its tool calls: system, user, assistant. */
function toolRoundInputStart(): unknown[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    {
      role: 'user',
      content: [
        { type: 'input_text', text: QUESTION },
        { type: 'input_image', image_url: IMAGE_URL },
        { type: 'input_image', image_url: PNG_DATA_URL },
      ],
    },
    { role: 'assistant', content: 'A cat. Adding now.' },
  ];
}

/** The Responses API shapes both the openai and the grok kind speak (xAI follows OpenAI's). */
export const responses = {
  messageItem,
  functionCallItem,
  usage,
  sse,
  messageAdded,
  textDelta,
  toolRoundInputStart,
};

export function requestOf(
  messages: readonly Message[],
  extra: Partial<Omit<CompletionRequest, 'messages'>> = {},
): CompletionRequest {
  return {
    messages,
    tools: [addTool],
    options: {},
    context: { sessionId: 'session_1', runId: 'run_1', agent: 'helper', iteration: 1, attempt: 1 },
    ...extra,
  };
}

/** Builds a completer the way config loading does: the kind's fields schema, then its factory. */
export function completerOf(kind: string, model: string, fields: Record<string, unknown>): Completer {
  const definition = providerKind(kind);
  if (definition === undefined) throw new Error(`provider kind ${kind} is not registered`);
  // max_reply_chars is a field of every entry, not of the kind: it goes beside the kind's fields.
  const { max_reply_chars, ...kindFields } = fields;
  const parsed = definition.fieldsSchema.parse(kindFields);
  return definition.create(
    {
      ...parsed,
      name: `test-${kind}`,
      kind,
      model,
      ...(typeof max_reply_chars === 'number' ? { max_reply_chars } : {}),
    },
    { configDir: '.', logger: createLogger({ level: 'silent' }) },
  );
}

export const neverAborted = (): AbortSignal => new AbortController().signal;

/** The RatchetError a promise rejects with (fails the test when it resolves or rejects with anything else). */
export async function failureOf(promise: Promise<unknown>): Promise<RatchetError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RatchetError);
  return error as RatchetError;
}
