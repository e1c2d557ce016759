import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { inboxQuerySchema, inboxSchema } from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';
import { toWireQuestion } from '../wire-views.js';

/**
 * GET /v1/questions: every pending question and tool approval across sessions, newest first, for a person
 * who answers them (the console's inbox). Named after what it lists, as the session's own
 * GET /v1/sessions/:id/questions, whose items it shares; answered through POST /v1/sessions/:id/respond.
 */
export const inboxRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.get(
    '/questions',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Every pending question and tool approval of every session, newest first',
        querystring: inboxQuerySchema,
        response: { 200: inboxSchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request) => listPendingQuestions(engine, request.query.limit),
  );
};

/** Every pending question of every session as the wire shows it (the HTTP route and the MCP tool). */
export async function listPendingQuestions(
  engine: Pick<ApiEngine, 'inbox'>,
  limit: number,
): Promise<z.infer<typeof inboxSchema>> {
  const inbox = await engine.inbox(limit);
  return {
    questions: inbox.questions.map((question) => ({
      ...toWireQuestion(question),
      root_run_id: question.root_run_id,
    })),
    truncated: inbox.truncated,
  };
}
