import type {
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolResultPart,
} from '@ai-sdk/provider';
import {
  type ImagePart,
  type Message,
  type Part,
  type ToolResultPart,
  textOf,
  toolCallsOf,
} from '../../chat/index.js';

type SdkPart =
  | { role: 'user'; part: LanguageModelV4TextPart | LanguageModelV4FilePart }
  | {
      role: 'assistant';
      part: LanguageModelV4TextPart | LanguageModelV4FilePart | LanguageModelV4ToolCallPart;
    }
  | { role: 'tool'; part: LanguageModelV4ToolResultPart };

/**
 * Translates a Ratchet chat into the AI SDK's prompt, which each provider package turns into its wire
 * format (Anthropic groups tool results into one user message, OpenAI sends one tool output per result,
 * Gemini sends function responses).
 *
 * - The system messages at the start of the chat are the system prompt. A system message later in the chat
 *   goes as a user message: not every API accepts system text mid-conversation (Gemini rejects it).
 * - Each other message becomes one SDK message, split where its parts change role: tool calls are the
 *   assistant's, tool results the tool's. Consecutive tool results are merged into one tool message, so a
 *   batch of parallel results answers its calls in one turn (Gemini requires that).
 * - A tool result carries the name of its call, found by id earlier in the chat (the message's sender, a
 *   tool name, when the call is not there).
 * - Empty text parts and messages left empty are dropped: APIs reject empty content blocks.
 */
export function toSdkPrompt(messages: readonly Message[]): LanguageModelV4Prompt {
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    for (const call of toolCallsOf(message)) toolNames.set(call.id, call.name);
  }

  const prompt: LanguageModelV4Prompt = [];
  let inSystemPrompt = true;
  for (const message of messages) {
    if (message.role === 'system' && inSystemPrompt) {
      const text = textOf(message);
      if (text !== '') prompt.push({ role: 'system', content: text });
      continue;
    }
    inSystemPrompt = false;
    let previousRole: SdkPart['role'] | undefined;
    for (const part of message.parts) {
      const sdkPart = toSdkPart(part, message, toolNames);
      if (sdkPart === undefined) continue;
      const last = prompt.at(-1);
      // Parts of one message stay together; tool results also join the tool message just before them.
      const joins = last?.role === sdkPart.role && (previousRole === sdkPart.role || sdkPart.role === 'tool');
      if (joins) (last.content as unknown[]).push(sdkPart.part);
      else prompt.push(messageOf(sdkPart));
      previousRole = sdkPart.role;
    }
  }
  return prompt;
}

function toSdkPart(
  part: Part,
  message: Message,
  toolNames: ReadonlyMap<string, string>,
): SdkPart | undefined {
  // Text of a late system message or of a tool message is context for the model: it goes as the user's.
  const contentRole = message.role === 'assistant' ? 'assistant' : 'user';
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { role: contentRole, part: { type: 'text', text: part.text } };
    case 'image':
      return { role: contentRole, part: filePartOf(part) };
    case 'tool_call':
      return {
        role: 'assistant',
        part: {
          type: 'tool-call',
          toolCallId: part.id,
          toolName: part.name,
          input: toolInputOf(part.arguments),
        },
      };
    case 'tool_result':
      return {
        role: 'tool',
        part: {
          type: 'tool-result',
          toolCallId: part.tool_call_id,
          toolName: toolNames.get(part.tool_call_id) ?? message.sender,
          output: toolOutputOf(part),
        },
      };
  }
}

/**
 * A result with images goes as content parts (text, then each image as file data), which the provider
 * packages send in their own form: Anthropic as image blocks inside its tool_result, OpenAI's Responses API
 * as input_image items of the function call output, Gemini as inline data of the function response.
 */
function toolOutputOf(part: ToolResultPart): LanguageModelV4ToolResultPart['output'] {
  if (part.images === undefined || part.images.length === 0 || part.is_error) {
    return { type: part.is_error ? 'error-text' : 'text', value: part.content };
  }
  return {
    type: 'content',
    value: [
      ...(part.content === '' ? [] : [{ type: 'text' as const, text: part.content }]),
      ...part.images.map((image) => ({
        type: 'file' as const,
        mediaType: image.media_type,
        data: { type: 'data' as const, data: image.data },
      })),
    ],
  };
}

function messageOf(sdkPart: SdkPart): LanguageModelV4Message {
  switch (sdkPart.role) {
    case 'user':
      return { role: 'user', content: [sdkPart.part] };
    case 'assistant':
      return { role: 'assistant', content: [sdkPart.part] };
    case 'tool':
      return { role: 'tool', content: [sdkPart.part] };
  }
}

/**
 * The arguments as a JSON value, as the SDK wants them. Arguments that are not a JSON object (the model
 * wrote invalid JSON, and the tool result already told it so) go as `{}`: Anthropic and Gemini only accept
 * an object there.
 */
function toolInputOf(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const dataUrlPattern = /^data:(image\/[\w.+-]+);base64,(.*)$/s;

const imageTypesByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

/**
 * Image URLs go to the provider as URLs (the provider's API fetches them; workers fetch nothing). The media
 * type comes from the file extension when there is one; otherwise it is the bare "image", which Anthropic
 * and OpenAI accept for URLs and Gemini rejects (it must be told the exact type).
 */
function filePartOf(image: ImagePart): LanguageModelV4FilePart {
  if (image.url === undefined) {
    return {
      type: 'file',
      mediaType: image.media_type ?? 'image',
      data: { type: 'data', data: image.data ?? '' },
    };
  }
  const inline = dataUrlPattern.exec(image.url);
  if (inline?.[1] !== undefined && inline[2] !== undefined) {
    return { type: 'file', mediaType: inline[1], data: { type: 'data', data: inline[2] } };
  }
  const url = new URL(image.url);
  const extension = /\.([a-z0-9]+)$/i.exec(url.pathname)?.[1]?.toLowerCase();
  const mediaType = (extension !== undefined && imageTypesByExtension[extension]) || 'image';
  return { type: 'file', mediaType, data: { type: 'url', url } };
}
