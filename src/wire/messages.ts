import { z } from 'zod';
import { imagePartSchema, messageSchema, textPartSchema } from '../chat/index.js';
import { idempotencyKeySchema } from '../schemas/index.js';

/** The chat's messages on the wire (GET and POST /v1/sessions/:id/messages, GET /v1/runs/:id/messages). */

/** What a person may put in a message: text and images (tool calls and results are the engine's). */
export const inputPartSchema = z.discriminatedUnion('type', [textPartSchema, imagePartSchema]);
export const inputPartsSchema = z.array(inputPartSchema).min(1);

/** `{text}` or `{parts}`: one object with both optional, so each invalid field is reported with its path. */
export const sendMessageBodySchema = z
  .strictObject({
    text: z.string().min(1).optional(),
    parts: inputPartsSchema.optional(),
    idempotency_key: idempotencyKeySchema
      .optional()
      .describe('Makes the message idempotent, like the Idempotency-Key header (decision 0035).'),
  })
  .refine((body) => (body.text === undefined) !== (body.parts === undefined), {
    message: 'give either `text` or `parts`',
  })
  .describe('Either `text` or `parts`.');

export const messagesQuerySchema = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only messages whose index is greater than this (all messages when omitted).'),
});

export const chatMessageSchema = messageSchema
  .extend({ index: z.number().int().nonnegative().describe('Position in the chat.') })
  .meta({ id: 'Message' });

export const messageListSchema = z.strictObject({ messages: z.array(chatMessageSchema) });

export const runMessageListSchema = z
  .strictObject({
    /** `main` for a root run (its session's chat, every run of the session); the run's own id otherwise. */
    chat_id: z.string(),
    messages: messageListSchema.shape.messages,
  })
  .meta({ id: 'RunMessageList' });

/** A message of a session's chat, with its index in the chat (GET /v1/sessions/:id/messages). */
export type ChatMessage = z.output<typeof messageListSchema>['messages'][number];
/** GET /v1/runs/:id/messages: the chat the run works on (`chat_id`), each message with its index. */
export type RunMessages = z.output<typeof runMessageListSchema>;
