import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  acceptedRunSchema,
  cancelRunBodySchema,
  createRunBodySchema,
  runParamsSchema,
  runSchema,
  waitQuerySchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';
import { idempotencyHeadersSchema, idempotencyKeyOf, sendSubmitted } from '../idempotency-header.js';
import { cancelRun, requireRun, submitRun, waitForRun } from '../run-requests.js';

const tags = ['runs'];

/** Runs: one-shot submission, state, long-poll, cancellation. */
export const runRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.post(
    '/runs',
    {
      schema: {
        tags,
        summary: 'Submit a task: starts a run (on a new session unless session_id is given)',
        body: createRunBodySchema,
        headers: idempotencyHeadersSchema,
        response: {
          200: acceptedRunSchema.describe(
            'A replay: the run an earlier submission with the same key started',
          ),
          202: acceptedRunSchema,
          ...errorResponses(400, 401, 403, 404, 409, 413, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const idempotencyKey = idempotencyKeyOf(request, request.body.idempotency_key);
      return sendSubmitted(reply, await submitRun(engine, request.body, { idempotencyKey }));
    },
  );

  app.get(
    '/runs/:id',
    {
      schema: {
        tags,
        summary: 'A run: status, result or error, usage, progress, pending question',
        params: runParamsSchema,
        response: { 200: runSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => requireRun(engine, request.params.id),
  );

  app.get(
    '/runs/:id/wait',
    {
      schema: {
        tags,
        summary: 'Wait until the run is finished, or timeout_s passes (then its current state)',
        params: runParamsSchema,
        querystring: waitQuerySchema,
        response: { 200: runSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      // The response closes before it is sent only when the client went away.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const { run } = await waitForRun(engine, request.params.id, {
        timeoutS: request.query.timeout_s,
        signal: gone.signal,
      });
      return run;
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
        response: { 202: runSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 503) },
      },
    },
    async (request, reply) => {
      return reply.status(202).send(await cancelRun(engine, request.params.id, request.body?.reason));
    },
  );
};
