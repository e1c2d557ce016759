import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  acceptedRunSchema,
  forkRunBodySchema,
  retryRunBodySchema,
  runParamsSchema,
  runSchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';
import { forkRun, retryRun } from '../run-requests.js';
import { toWireRun } from '../wire-views.js';

const tags = ['runs'];

/** Steering finished or running runs: retry a failed or cancelled one, fork one at an iteration (decision 0022). */
export const steerRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.post(
    '/runs/:id/retry',
    {
      schema: {
        tags,
        summary:
          'Retry a failed or cancelled run: a new run of the same session continues it from its last recorded iteration, paying for no recorded reply or tool result again',
        params: runParamsSchema,
        body: retryRunBodySchema,
        response: { 202: acceptedRunSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 503) },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await retryRun(engine, request.params.id, request.body ?? {})),
  );

  app.post(
    '/runs/:id/fork',
    {
      schema: {
        tags,
        summary:
          "Fork a run at an iteration: a new session whose chat is the run's up to that iteration's recorded reply (copied, not asked again), and a run that continues it",
        params: runParamsSchema,
        body: forkRunBodySchema,
        response: { 202: acceptedRunSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 503) },
      },
    },
    async (request, reply) => reply.status(202).send(await forkRun(engine, request.params.id, request.body)),
  );

  app.post(
    '/runs/:id/upgrade',
    {
      schema: {
        tags,
        summary:
          "Move an unfinished run to its workers' current definition of its agent at its next iteration (decision 0030), recorded with an agent_upgraded event",
        params: runParamsSchema,
        response: { 202: runSchema, ...errorResponses(401, 403, 404, 409, 503) },
      },
    },
    async (request, reply) => reply.status(202).send(toWireRun(await engine.upgradeRun(request.params.id))),
  );
};
