import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ListedRunStatus, RunFilter, SessionFilter } from '../../workflows/run-listing.js';
import type { ApiEngine } from '../api-engine.js';
import { decodeCursor, encodeCursor } from '../list-cursor.js';
import {
  errorResponses,
  runListQuerySchema,
  runListSchema,
  runSummaryQuerySchema,
  runSummarySchema,
  sessionListQuerySchema,
  sessionListSchema,
} from '../schemas.js';

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
    async (request) => {
      const query = request.query;
      const statuses =
        query.status === undefined
          ? undefined
          : ([query.status].flat().flatMap((list) => list.split(',')) as ListedRunStatus[]);
      const filter: RunFilter = {
        limit: query.limit,
        ...(statuses ? { statuses } : {}),
        ...(query.agent === undefined ? {} : { agent: query.agent }),
        ...(query.session_id === undefined ? {} : { sessionId: query.session_id }),
        ...(query.root === undefined ? {} : { root: query.root }),
        ...(query.since === undefined ? {} : { sinceMs: Date.parse(query.since) }),
        ...(query.until === undefined ? {} : { untilMs: Date.parse(query.until) }),
        ...(query.q === undefined ? {} : { idPrefix: query.q }),
        ...(query.cursor === undefined ? {} : { after: decodeCursor('runs', query.cursor) }),
      };
      const page = await engine.listRuns(filter);
      return { runs: page.runs, next_cursor: page.next === null ? null : encodeCursor('runs', page.next) };
    },
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
    async (request) => {
      const since = request.query.since;
      const counts = await engine.countRuns(since === undefined ? undefined : Date.parse(since));
      const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
      return { counts, total, since: since === undefined ? null : new Date(Date.parse(since)).toISOString() };
    },
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
    async (request) => {
      const query = request.query;
      const filter: SessionFilter = {
        limit: query.limit,
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.agent === undefined ? {} : { agent: query.agent }),
        ...(query.since === undefined ? {} : { sinceMs: Date.parse(query.since) }),
        ...(query.until === undefined ? {} : { untilMs: Date.parse(query.until) }),
        ...(query.q === undefined ? {} : { idPrefix: query.q }),
        ...(query.cursor === undefined ? {} : { after: decodeCursor('sessions', query.cursor) }),
      };
      const page = await engine.listSessions(filter);
      return {
        sessions: page.sessions,
        next_cursor: page.next === null ? null : encodeCursor('sessions', page.next),
      };
    },
  );
};
