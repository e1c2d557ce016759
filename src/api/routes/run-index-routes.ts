import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  runListQuerySchema,
  runListSchema,
  runSummaryQuerySchema,
  runSummarySchema,
  sessionListQuerySchema,
  sessionListSchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';
import { listRunsPage, listSessionsPage, runSummary } from '../run-index-requests.js';

/**
 * Finding runs and sessions without knowing their ids: the run index, newest first, with filters and a
 * cursor that stays right while runs are created and finished; counts by status for a dashboard.
 */
export const runIndexRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.get(
    '/runs',
    {
      schema: {
        tags: ['runs'],
        summary:
          'Runs, newest first: filter by status, agent, session, top-level, creation time or id prefix',
        querystring: runListQuerySchema,
        response: { 200: runListSchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request) => listRunsPage(engine, request.query),
  );

  app.get(
    '/runs/summary',
    {
      schema: {
        tags: ['runs'],
        summary: 'How many runs have each status (created since a time, when given)',
        querystring: runSummaryQuerySchema,
        response: { 200: runSummarySchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request) => runSummary(engine, request.query.since),
  );

  app.get(
    '/sessions',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Sessions, most recently active first: filter by status, agent, last activity or id prefix',
        querystring: sessionListQuerySchema,
        response: { 200: sessionListSchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request) => listSessionsPage(engine, request.query),
  );
};
