import type { z } from 'zod';
import {
  decodeCursor,
  encodeCursor,
  type runListSchema,
  type runSummarySchema,
  type sessionListSchema,
} from '../wire/index.js';
import type { ListedRunStatus, RunFilter, SessionFilter } from '../workflows/index.js';
import type { ApiEngine } from './api-engine.js';

/**
 * The run index's requests, shared by the HTTP routes and the MCP tools: a validated query (from a query
 * string or a tool's arguments) to the engine's filter, and its page to the wire shape with an opaque cursor.
 */

export interface RunListQuery {
  /** One status, a comma-separated list, or a list (validated before). */
  status?: string | readonly string[] | undefined;
  agent?: string | undefined;
  session_id?: string | undefined;
  root?: boolean | undefined;
  since?: string | undefined;
  until?: string | undefined;
  q?: string | undefined;
  text?: string | undefined;
  tenant?: string | undefined;
  limit: number;
  /** A next_cursor of GET /v1/runs (validated before). */
  cursor?: string | undefined;
}

export async function listRunsPage(
  engine: ApiEngine,
  query: RunListQuery,
): Promise<z.infer<typeof runListSchema>> {
  const statuses =
    query.status === undefined
      ? undefined
      : ([query.status].flat().flatMap((list) => list.split(',')) as ListedRunStatus[]);
  const after = query.cursor === undefined ? undefined : decodeCursor('runs', query.cursor);
  const filter: RunFilter = {
    limit: query.limit,
    ...(statuses ? { statuses } : {}),
    ...(query.agent === undefined ? {} : { agent: query.agent }),
    ...(query.session_id === undefined ? {} : { sessionId: query.session_id }),
    ...(query.root === undefined ? {} : { root: query.root }),
    ...(query.since === undefined ? {} : { sinceMs: Date.parse(query.since) }),
    ...(query.until === undefined ? {} : { untilMs: Date.parse(query.until) }),
    ...(query.q === undefined ? {} : { idPrefix: query.q }),
    ...(query.text === undefined ? {} : { text: query.text }),
    ...(query.tenant === undefined ? {} : { tenant: query.tenant }),
    ...(after === undefined ? {} : { after }),
  };
  const page = await engine.listRuns(filter);
  return { runs: page.runs, next_cursor: page.next === null ? null : encodeCursor('runs', page.next) };
}

export async function runSummary(
  engine: ApiEngine,
  since: string | undefined,
): Promise<z.infer<typeof runSummarySchema>> {
  const sinceMs = since === undefined ? undefined : Date.parse(since);
  const counts = await engine.countRuns(sinceMs);
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  return { counts, total, since: sinceMs === undefined ? null : new Date(sinceMs).toISOString() };
}

export interface SessionListQuery {
  status?: 'idle' | 'active' | undefined;
  agent?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  q?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export async function listSessionsPage(
  engine: ApiEngine,
  query: SessionListQuery,
): Promise<z.infer<typeof sessionListSchema>> {
  const after = query.cursor === undefined ? undefined : decodeCursor('sessions', query.cursor);
  const filter: SessionFilter = {
    limit: query.limit,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.agent === undefined ? {} : { agent: query.agent }),
    ...(query.since === undefined ? {} : { sinceMs: Date.parse(query.since) }),
    ...(query.until === undefined ? {} : { untilMs: Date.parse(query.until) }),
    ...(query.q === undefined ? {} : { idPrefix: query.q }),
    ...(after === undefined ? {} : { after }),
  };
  const page = await engine.listSessions(filter);
  return {
    sessions: page.sessions,
    next_cursor: page.next === null ? null : encodeCursor('sessions', page.next),
  };
}
