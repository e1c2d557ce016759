import { z } from 'zod';

export const roleSchema = z.enum(['system', 'user', 'assistant', 'tool']);
export type Role = z.infer<typeof roleSchema>;

export const textPartSchema = z.strictObject({ type: z.literal('text'), text: z.string() });

/** An image by URL, or inline as base64 data with its media type (exactly one of the two forms). */
export const imagePartSchema = z
  .strictObject({
    type: z.literal('image'),
    url: z.url().optional(),
    data: z.base64().optional(),
    media_type: z
      .string()
      .regex(/^image\/[\w.+-]+$/, 'expected an image media type such as "image/png"')
      .optional(),
  })
  .refine(
    (part) =>
      part.url !== undefined
        ? part.data === undefined && part.media_type === undefined
        : part.data !== undefined && part.media_type !== undefined,
    { message: 'an image part has either a url, or data with a media_type' },
  );

/** `arguments` is the raw JSON text the model produced: it may be invalid, and the engine must say so. */
export const toolCallPartSchema = z.strictObject({
  type: z.literal('tool_call'),
  id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
});

/** An image a tool returned (a browser screenshot): inline base64 data with its media type. */
export const toolResultImageSchema = z.strictObject({
  data: z.base64(),
  media_type: z.string().regex(/^image\/[\w.+-]+$/, 'expected an image media type such as "image/png"'),
});

export const toolResultPartSchema = z.strictObject({
  type: z.literal('tool_result'),
  tool_call_id: z.string().min(1),
  content: z.string(),
  is_error: z.boolean(),
  /** Images of the result, sent to the model inside the tool result (absent: none). */
  images: z.array(toolResultImageSchema).optional(),
});

export const partSchema = z.discriminatedUnion('type', [
  textPartSchema,
  imagePartSchema,
  toolCallPartSchema,
  toolResultPartSchema,
]);

export type TextPart = z.infer<typeof textPartSchema>;
export type ImagePart = z.infer<typeof imagePartSchema>;
export type ToolCallPart = z.infer<typeof toolCallPartSchema>;
export type ToolResultPart = z.infer<typeof toolResultPartSchema>;
export type Part = z.infer<typeof partSchema>;

export const messageSchema = z.strictObject({
  id: z.string().min(1),
  /** Who wrote it: an agent name, "user", or a tool name. Identity across re-roling in teams. */
  sender: z.string(),
  role: roleSchema,
  parts: z.array(partSchema),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.iso.datetime(),
});
export type Message = z.infer<typeof messageSchema>;

/** All text parts joined by newlines. */
export function textOf(message: { parts: readonly Part[] }): string {
  return message.parts
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

export function toolCallsOf(message: { parts: readonly Part[] }): ToolCallPart[] {
  return message.parts.filter((part): part is ToolCallPart => part.type === 'tool_call');
}

export function toolResultsOf(message: { parts: readonly Part[] }): ToolResultPart[] {
  return message.parts.filter((part): part is ToolResultPart => part.type === 'tool_result');
}
