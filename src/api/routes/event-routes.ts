import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RatchetEvent } from '../../events/event.js';
import {
  eventsQuerySchema,
  sessionParamsSchema,
  streamIdForm,
  streamIdSchema,
  wireEventSchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { ApiError } from '../api-error.js';
import { errorResponses } from '../error-responses.js';
import { readBacklogPage, sessionEvents } from '../event-sources.js';
import { SseConnection } from '../sse-connection.js';
import { describeValidationIssues } from '../validation-issues.js';
import { requireSession } from './session-routes.js';

export interface EventRoutesOptions {
  engine: ApiEngine;
  keepAliveMs: number;
  /** Open streams, closed when the server closes (they would keep it open for ever). */
  openStreams: Set<SseConnection>;
}

/** A client that cannot take a buffer's worth of events for this long is disconnected; it may resume. */
const drainTimeoutMs = 30_000;

/**
 * The session's event log as Server-Sent Events: the id of each frame is the event's log id, so a client
 * that reconnects with Last-Event-ID (or `?after=`) gets everything after it, with no gap and no duplicate.
 */
export const eventRoutes: FastifyPluginAsyncZod<EventRoutesOptions> = async (app, options) => {
  const { engine } = options;
  app.get(
    '/sessions/:id/events',
    {
      // A HEAD request would hold a stream open that sends nothing.
      exposeHeadRoute: false,
      schema: {
        tags: ['sessions'],
        summary: "The session's events as Server-Sent Events (resumable with Last-Event-ID)",
        description:
          'Each frame: `id: <event id>`, `event: <kind>`, `data: <the event as JSON>`; a `: keep-alive` ' +
          'comment when idle. With follow=false, 204 when there is nothing to send and no run to wait for.',
        params: sessionParamsSchema,
        querystring: eventsQuerySchema,
        response: {
          200: {
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: wireEventSchema } },
          },
          204: z.null().describe('follow=false and nothing to send.'),
          ...errorResponses(400, 401, 403, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const after = resumeAfter(request.headers['last-event-id']) ?? request.query.after;
      const session = await requireSession(engine, id);
      const activeRunId = session.active_run_id;

      let firstPage: RatchetEvent[] | undefined;
      if (!request.query.follow && activeRunId === null) {
        firstPage = await readBacklogPage(engine, id, after);
        // Nothing to send and nothing to wait for: 204 also tells an EventSource not to reconnect.
        if (firstPage.length === 0) return reply.status(204).send(null);
      }

      // The source first: a follower refused (too many) is still a 503, before the stream's 200 is sent.
      const stream = new AbortController();
      const { signal } = stream;
      const events = sessionEvents(engine, id, {
        after,
        signal,
        follow: request.query.follow,
        activeRunId,
        ...(firstPage ? { firstPage } : {}),
      });
      let connection: SseConnection;
      try {
        connection = new SseConnection(reply, { keepAliveMs: options.keepAliveMs, drainTimeoutMs });
      } catch (error) {
        stream.abort();
        throw error;
      }
      connection.signal.addEventListener('abort', () => stream.abort(), { once: true });
      options.openStreams.add(connection);
      try {
        for await (const event of events) {
          if (!(await connection.send(event))) break;
        }
      } catch (error) {
        // The client resumes from its last event; the stream cannot carry an error answer any more.
        if (!signal.aborted) request.log.warn({ err: error, session_id: id }, 'event stream failed');
      } finally {
        options.openStreams.delete(connection);
        connection.close();
        stream.abort();
      }
      return reply;
    },
  );
};

/** The Last-Event-ID header, validated like `?after=`; it wins (a reconnecting EventSource keeps its URL). */
function resumeAfter(header: string | string[] | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  const parsed = streamIdSchema.safeParse(value);
  if (!parsed.success) {
    const issues = [
      { location: 'headers', path: 'last-event-id', message: `must be an event id: ${streamIdForm}` },
    ];
    throw new ApiError('invalid_request', describeValidationIssues(issues), { issues });
  }
  return parsed.data;
}
