import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { configHash, type RatchetConfig } from '../../config/index.js';
import { ratchetVersion } from '../../version.js';
import {
  messagesQuerySchema,
  runMessageListSchema,
  runParamsSchema,
  runStepsSchema,
  runTreeSchema,
  stepsQuerySchema,
  systemStateSchema,
} from '../../wire/index.js';
import { adminQueuesPath } from '../admin-queues.js';
import { errorResponses } from '../error-responses.js';
import {
  type RunInspection,
  requireRunMessages,
  requireRunSteps,
  requireRunTree,
} from '../run-inspection-requests.js';

/** What a run did step by step, its tree of runs, and the state of the system. */
export const inspectRoutes: FastifyPluginAsyncZod<{ engine: RunInspection; config: RatchetConfig }> = async (
  app,
  { engine, config },
) => {
  const version = ratchetVersion();
  const hash = configHash(config);
  const adminQueues = config.api.admin_queues ? adminQueuesPath : null;

  app.get(
    '/runs/:id/tree',
    {
      schema: {
        tags: ['runs'],
        summary: 'The run and every run below it: delegations, spawns, team turns, handoff members',
        params: runParamsSchema,
        response: { 200: runTreeSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => requireRunTree(engine, request.params.id),
  );

  app.get(
    '/runs/:id/steps',
    {
      schema: {
        tags: ['runs'],
        summary:
          "The run's timeline from its journal: each iteration's attempts (which worker, why repeated), model, tokens, cost, tool calls and waits",
        params: runParamsSchema,
        querystring: stepsQuerySchema,
        response: { 200: runStepsSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => requireRunSteps(engine, request.params.id, request.query),
  );

  app.get(
    '/runs/:id/messages',
    {
      schema: {
        tags: ['runs'],
        summary:
          "The chat the run works on, oldest first: a child run's or team member's own, a root run's session chat",
        params: runParamsSchema,
        querystring: messagesQuerySchema,
        response: { 200: runMessageListSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => requireRunMessages(engine, request.params.id, request.query.after),
  );

  app.get(
    '/system',
    {
      schema: {
        tags: ['system'],
        summary: 'Live workers, step queues per shard and step kind, runs by status, version and config hash',
        response: { 200: systemStateSchema, ...errorResponses(401, 403, 503) },
      },
    },
    async () => ({ version, config_hash: hash, admin_queues: adminQueues, ...(await engine.systemState()) }),
  );
};
