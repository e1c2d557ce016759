import { z } from 'zod';
import type { JsonValue } from '../../tools/index.js';

// What a third-party server sends is read leniently: only the fields used here, anything else ignored.
const contentPartSchema = z.looseObject({ type: z.string() });
const callResultSchema = z.looseObject({
  content: z.array(contentPartSchema).optional(),
  structuredContent: z.record(z.string(), z.json()).optional(),
  isError: z.boolean().optional(),
  /** The result shape of servers older than protocol version 2024-11-05. */
  toolResult: z.json().optional(),
});

const textPartSchema = z.looseObject({ text: z.string() });
const binaryPartSchema = z.looseObject({ data: z.string(), mimeType: z.string().optional() });
const resourcePartSchema = z.looseObject({
  resource: z.looseObject({
    uri: z.string(),
    text: z.string().optional(),
    blob: z.string().optional(),
    mimeType: z.string().optional(),
  }),
});
const resourceLinkPartSchema = z.looseObject({ uri: z.string(), name: z.string().optional() });

/**
 * An MCP tool result as the output of our tool: the text of its content parts (images, audio and binary
 * resources are described, since a tool result is text), or its structured content when it has no content.
 * A result flagged `isError` throws, which makes it an error result the model sees.
 */
export function toolOutputOfMcpResult(result: unknown): string | JsonValue {
  const parsed = callResultSchema.safeParse(result);
  if (!parsed.success) throw new Error('the MCP server sent a tool result that is not a valid MCP result');
  const { content = [], structuredContent, isError, toolResult } = parsed.data;
  const text = content.map(describePart).join('\n\n');
  if (isError) throw new Error(text === '' ? 'the MCP server reported an error without details' : text);
  if (content.length > 0) return text;
  if (structuredContent !== undefined) return structuredContent as JsonValue;
  if (toolResult !== undefined) return toolResult as JsonValue;
  return '';
}

function describePart(part: z.output<typeof contentPartSchema>): string {
  switch (part.type) {
    case 'text': {
      const parsed = textPartSchema.safeParse(part);
      return parsed.success ? parsed.data.text : '[text content without text]';
    }
    case 'image':
    case 'audio': {
      const parsed = binaryPartSchema.safeParse(part);
      if (!parsed.success) return `[${part.type} content]`;
      return `[${part.type} ${parsed.data.mimeType ?? ''}, ${base64Bytes(parsed.data.data)} bytes, not shown]`;
    }
    case 'resource': {
      const parsed = resourcePartSchema.safeParse(part);
      if (!parsed.success) return '[embedded resource]';
      const { uri, text, blob, mimeType } = parsed.data.resource;
      if (text !== undefined) return `[resource ${uri}]\n${text}`;
      const size = blob === undefined ? '' : `, ${base64Bytes(blob)} bytes`;
      return `[resource ${uri}${mimeType ? ` ${mimeType}` : ''}${size}, not shown]`;
    }
    case 'resource_link': {
      const parsed = resourceLinkPartSchema.safeParse(part);
      if (!parsed.success) return '[resource link]';
      const { uri, name } = parsed.data;
      return `[resource link ${uri}${name ? ` (${name})` : ''}]`;
    }
    default:
      return `[${part.type} content, not shown]`;
  }
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
