import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { RatchetError } from '../../errors/index.js';
import type { ApiEngine } from '../api-engine.js';
import {
  acceptedRunSchema,
  cancelRunBodySchema,
  createRunBodySchema,
  errorResponses,
  runParamsSchema,
  runSchema,
  waitQuerySchema,
} from '../schemas.js';
import { toWireRun } from '../wire-views.js';

const tags = ['runs'];

/** How often a wait request looks at its run. */
const waitPollMs = 200;

/** Runs: one-shot submission, state, long-poll, cancellation. */
export const runRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.post(
    '/runs',
    {
      schema: {
        tags,
        summary: 'Submit a task: starts a run (on a new session unless session_id is given)',
        body: createRunBodySchema,
        response: { 202: acceptedRunSchema, ...errorResponses(400, 401, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      const { input, agent, session_id, metadata, budget } = request.body;
      const started = await engine.startRun({
        input,
        ...(agent === undefined ? {} : { agent }),
        ...(session_id === undefined ? {} : { sessionId: session_id }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(budget === undefined ? {} : { budget }),
      });
      return reply.status(202).send({ run_id: started.runId, session_id: started.sessionId });
    },
  );

  app.get(
    '/runs/:id',
    {
      schema: {
        tags,
        summary: 'A run: status, result or error, usage, progress, pending question',
        params: runParamsSchema,
        response: { 200: runSchema, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const run = await engine.getRun(request.params.id);
      if (!run) throw new RatchetError('run_not_found', `unknown run ${request.params.id}`);
      return toWireRun(run);
    },
  );

  app.get(
    '/runs/:id/wait',
    {
      schema: {
        tags,
        summary: 'Wait until the run is finished, or timeout_s passes (then its current state)',
        params: runParamsSchema,
        querystring: waitQuerySchema,
        response: { 200: runSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      // The response closes before it is sent only when the client went away.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const run = await engine.waitForRun(request.params.id, {
        timeoutMs: request.query.timeout_s * 1000,
        pollMs: waitPollMs,
        signal: gone.signal,
      });
      return toWireRun(run);
    },
  );

  app.post(
    '/runs/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a run: it stops at the next step boundary at the latest',
        params: runParamsSchema,
        body: cancelRunBodySchema,
        response: { 202: runSchema, ...errorResponses(400, 401, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      const reason = request.body?.reason;
      const run = await (reason === undefined
        ? engine.cancelRun(request.params.id)
        : engine.cancelRun(request.params.id, reason));
      return reply.status(202).send(toWireRun(run));
    },
  );
};
