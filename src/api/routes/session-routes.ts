import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  approvalParamsSchema,
  createSessionBodySchema,
  messageListSchema,
  questionListSchema,
  queuedMessageParamsSchema,
  rememberedApprovalListSchema,
  respondAcceptedSchema,
  respondBodySchema,
  sendMessageBodySchema,
  sentMessageSchema,
  sessionMessagesQuerySchema,
  sessionNoteListSchema,
  sessionParamsSchema,
  sessionSchema,
  sessionStateSchema,
  sessionTaskListSchema,
} from '../../wire/index.js';
import { isSessionId, type SessionView } from '../../workflows/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';
import { idempotencyHeadersSchema, idempotencyKeyOf, sendSubmitted } from '../idempotency-header.js';
import { sessionNotesOf, sessionNotFound, sessionStateOf, sessionTasksOf } from '../session-data-reads.js';
import { toWireMessage, toWireQuestion, toWireSentMessage, toWireSession } from '../wire-views.js';

const tags = ['sessions'];

/** Sessions: create, read, delete; their chat, their messages (each starts a run), their questions. */
export const sessionRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.post(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'Create a session with an agent',
        body: createSessionBodySchema,
        response: { 201: sessionSchema, ...errorResponses(400, 401, 403, 404, 413, 503) },
      },
    },
    async (request, reply) => {
      const session = await engine.createSession({
        ...(request.body?.agent === undefined ? {} : { agent: request.body.agent }),
        ...(request.body?.metadata === undefined ? {} : { metadata: request.body.metadata }),
      });
      return reply.status(201).header('location', `/v1/sessions/${session.id}`).send(toWireSession(session));
    },
  );

  app.get(
    '/sessions/:id',
    {
      schema: {
        tags,
        summary: 'A session, its status and its active run',
        params: sessionParamsSchema,
        response: { 200: sessionSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => toWireSession(await requireSession(engine, request.params.id)),
  );

  app.delete(
    '/sessions/:id',
    {
      schema: {
        tags,
        summary: 'Cancel the active run of a session and delete all its data',
        params: sessionParamsSchema,
        response: { 204: z.null().describe('Deleted.'), ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isSessionId(id) || !(await engine.deleteSession(id))) throw sessionNotFound(id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/sessions/:id/messages',
    {
      schema: {
        tags,
        summary: "The session's chat messages, oldest first (optionally only one sender's)",
        params: sessionParamsSchema,
        querystring: sessionMessagesQuerySchema,
        response: { 200: messageListSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { id } = request.params;
      await requireSession(engine, id);
      const { after, sender, limit } = request.query;
      const from = after === undefined ? 0 : after + 1;
      const messages = await engine.readChat(id, { from });
      // Each keeps its index in the chat, so `after` pages on from the last one returned.
      const shown = messages
        .map((message, offset) => toWireMessage(message, from + offset))
        .filter((message) => sender === undefined || message.sender === sender);
      return { messages: limit === undefined ? shown : shown.slice(0, limit) };
    },
  );

  app.post(
    '/sessions/:id/messages',
    {
      schema: {
        tags,
        summary:
          'Send a message: starts a run on the session, or, while its run is active, does what `on_busy` says',
        params: sessionParamsSchema,
        body: sendMessageBodySchema,
        headers: idempotencyHeadersSchema,
        response: {
          200: sentMessageSchema.describe('A replay: the run an earlier message with the same key started'),
          202: sentMessageSchema,
          ...errorResponses(400, 401, 403, 404, 409, 413, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      const { text, parts, on_busy } = request.body;
      const idempotencyKey = idempotencyKeyOf(request, request.body.idempotency_key);
      const sent = await engine.sendMessage({
        input: text ?? parts ?? [],
        sessionId: id,
        ...(on_busy === undefined ? {} : { onBusy: on_busy }),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
      return sendSubmitted(reply, toWireSentMessage(sent));
    },
  );

  app.delete(
    '/sessions/:id/queued/:message_id',
    {
      schema: {
        tags,
        summary: 'Take a queued message back before it starts its run',
        params: queuedMessageParamsSchema,
        response: {
          204: z.null().describe('Taken out of the queue.'),
          ...errorResponses(401, 403, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const { id, message_id } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      await engine.cancelQueuedMessage(id, message_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/sessions/:id/questions',
    {
      schema: {
        tags,
        summary: 'The pending questions of the session (ask_user and tool approvals)',
        params: sessionParamsSchema,
        response: { 200: questionListSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      const questions = await engine.listQuestions(id);
      return { questions: questions.map(toWireQuestion) };
    },
  );

  app.get(
    '/sessions/:id/approvals',
    {
      schema: {
        tags,
        summary: "The session's remembered approvals: tool calls approved for the rest of the session",
        params: sessionParamsSchema,
        response: { 200: rememberedApprovalListSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      const approvals = await engine.listApprovals(id);
      return { approvals: approvals.map(({ v: _v, ...approval }) => approval) };
    },
  );

  app.delete(
    '/sessions/:id/approvals/:key',
    {
      schema: {
        tags,
        summary: 'Revoke a remembered approval: later calls it covered are asked again',
        params: approvalParamsSchema,
        response: { 204: z.null(), ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { id, key } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      await engine.revokeApproval(id, key);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/sessions/:id/state',
    {
      schema: {
        tags,
        summary: "What the session's agents set on their state blackboard",
        params: sessionParamsSchema,
        response: { 200: sessionStateSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => sessionStateOf(engine, request.params.id),
  );

  app.get(
    '/sessions/:id/tasks',
    {
      schema: {
        tags,
        summary: "The session's task board",
        params: sessionParamsSchema,
        response: { 200: sessionTaskListSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => sessionTasksOf(engine, request.params.id),
  );

  app.get(
    '/sessions/:id/notes',
    {
      schema: {
        tags,
        summary: "The session's notes: shared ones and each agent's",
        params: sessionParamsSchema,
        response: { 200: sessionNoteListSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => sessionNotesOf(engine, request.params.id),
  );

  app.post(
    '/sessions/:id/respond',
    {
      schema: {
        tags,
        summary: 'Answer a pending question; the branch that asked resumes',
        params: sessionParamsSchema,
        body: respondBodySchema,
        response: { 202: respondAcceptedSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isSessionId(id)) throw sessionNotFound(id);
      const { question_id, response } = request.body;
      await engine.respond(id, question_id, response);
      return reply.status(202).send({ session_id: id, question_id });
    },
  );
};

/** The session, or a 404 (also for text that cannot be a session id). */
export async function requireSession(engine: ApiEngine, sessionId: string): Promise<SessionView> {
  const session = isSessionId(sessionId) ? await engine.getSession(sessionId) : undefined;
  if (!session) throw sessionNotFound(sessionId);
  return session;
}
