import { z } from 'zod';
import { imagePartSchema, messageSchema, textPartSchema } from '../chat/index.js';
import { idempotencyKeySchema, onBusyPolicies } from '../schemas/index.js';

/** The chat's messages on the wire (GET and POST /v1/sessions/:id/messages, GET /v1/runs/:id/messages). */

/** What a person may put in a message: text and images (tool calls and results are the engine's). */
export const inputPartSchema = z.discriminatedUnion('type', [textPartSchema, imagePartSchema]);
export const inputPartsSchema = z.array(inputPartSchema).min(1);

/** `{text}` or `{parts}`: one object with both optional, so each invalid field is reported with its path. */
export const sendMessageBodySchema = z
  .strictObject({
    text: z.string().min(1).optional(),
    parts: inputPartsSchema.optional(),
    on_busy: z
      .enum(onBusyPolicies)
      .optional()
      .describe(
        "When the session's run is active: `reject` (409 session_busy), `queue` (the session's next run), " +
          '`steer` (joins the active run before its next model call) or `interrupt` (cancels it and starts ' +
          "this one). Default: the session agent's `options.on_busy` (`reject` unless set).",
      ),
    idempotency_key: idempotencyKeySchema
      .optional()
      .describe('Makes the message idempotent, like the Idempotency-Key header (decision 0035).'),
  })
  .refine((body) => (body.text === undefined) !== (body.parts === undefined), {
    message: 'give either `text` or `parts`',
  })
  .describe('Either `text` or `parts`.');

/** What a client sends to POST /v1/sessions/:id/messages. */
export type SendMessageInput = z.input<typeof sendMessageBodySchema>;

/** POST /v1/sessions/:id/messages: what became of the message (decision 0032). */
export const sentMessageSchema = z
  .strictObject({
    delivery: z
      .enum(['started', 'queued', 'steered', 'interrupted'])
      .describe(
        '`started`: it started `run_id`. `queued`: it waits, and will start `run_id`. `steered`: it joins the ' +
          'active run `run_id` before its next model call (if that run ends first, it is queued instead: a ' +
          '`message_queued` event with reason `run_ended` says so). `interrupted`: `interrupted_run_id` was ' +
          'cancelled and `run_id` started in its place.',
      ),
    run_id: z.string(),
    session_id: z.string(),
    message_id: z.string().optional().describe('A queued or steered message: its id (DELETE …/queued/:id).'),
    position: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('A queued or steered message: its place among those waiting (0 = next).'),
    interrupted_run_id: z.string().optional(),
    replayed: z
      .literal(true)
      .optional()
      .describe('Present on a replay: an earlier message with the same idempotency key started this run.'),
  })
  .meta({ id: 'SentMessage' });
export type SentMessageReply = z.output<typeof sentMessageSchema>;

/** A message waiting in a session's queue (GET /v1/sessions/:id `queued_messages`). */
export const queuedMessageSchema = z
  .strictObject({
    id: z.string(),
    parts: inputPartsSchema,
    sent_at: z.iso.datetime(),
    steered_to: z
      .string()
      .optional()
      .describe('The run it was sent to steer, which ended before its next model call.'),
  })
  .meta({ id: 'QueuedMessage' });
export type QueuedMessage = z.output<typeof queuedMessageSchema>;

export const queuedMessageParamsSchema = z.strictObject({
  id: z.string().min(1).max(200),
  message_id: z.string().min(1).max(200),
});

export const messagesQuerySchema = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only messages whose index is greater than this (all messages when omitted).'),
});

/** The longest sender name a chat filter takes (agent names, tool names and "user" are far shorter). */
export const maxSenderChars = 200;
/** The most messages one filtered read returns. */
export const maxMessagesLimit = 1_000;

/** GET /v1/sessions/:id/messages: `after`, and a filter by who wrote the messages. */
export const sessionMessagesQuerySchema = messagesQuerySchema.extend({
  sender: z
    .string()
    .min(1)
    .max(maxSenderChars)
    .optional()
    .describe(
      `Only the messages this sender wrote: an agent's name, "user", or a tool's name (at most ${maxSenderChars} characters).`,
    ),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxMessagesLimit)
    .optional()
    .describe(
      `At most this many messages, the oldest first (1 to ${maxMessagesLimit}; all when omitted): page on with ` +
        '`after` set to the last index.',
    ),
});
/** What the typed client sends as that query. */
export type SessionMessagesQuery = {
  after?: number;
  sender?: string;
  limit?: number;
};

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
