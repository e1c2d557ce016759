import { createHmac } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, digest, matchesDigest } from '../http/index.js';
import { ApiError, toApiError } from './api-error.js';
import { sendError } from './error-handler.js';

/** Where bull-board is mounted (`api.admin_queues: true`). */
export const adminQueuesPath = '/admin/queues';

/** The cookie a browser keeps after opening the board with `?token=`: scoped to the board's path only. */
export const adminQueuesCookie = 'ratchet_admin_queues';

/**
 * Headers of every board answer. bull-board's page has inline styles (and links a web font, which this
 * policy blocks: the board reaches nothing outside this server); it may not be framed and sends no Referer.
 */
export const adminQueuesHeaders = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
} as const;

export interface AdminQueuesOptions {
  /** The step queue of every shard, in shard order. */
  queues: readonly Queue[];
  /**
   * The operator tokens of `api.tokens` (a scoped token never opens the board: it shows every tenant's jobs).
   */
  tokens: readonly string[];
  /** Whether `api.tokens` has any entry: false = no token needed (the host guard still applies). */
  authenticated: boolean;
}

/**
 * bull-board for the step queues of every shard, read-only: its writes (remove, clean, retry, promote,
 * pause, edit job data) would move jobs behind the run records' back, and a run whose step job is removed
 * has no owner left (DESIGN.md rule 6). Steer runs through the API (cancel, retry, fork) instead.
 *
 * A browser cannot send a bearer header when it navigates, so with `api.tokens` set the board also takes the
 * token once as `?token=`: it answers with a cookie that stands for it (an HMAC of the token, not the token)
 * and a redirect to the same address without the token, so the token leaves the address bar and history.
 * The cookie is HttpOnly, SameSite=Strict and scoped to this path: it opens the board and nothing else.
 */
export const adminQueuesRoutes: FastifyPluginAsync<AdminQueuesOptions> = async (app, options) => {
  const cookieValues = options.tokens.map(cookieValueOf).map(digest);
  const tokenDigests = options.tokens.map(digest);

  // bull-board's own routes: the global bearer check skips them (this plugin checks them its own way);
  // the host guard applies as everywhere.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, withoutToken: true };
  });
  // Answers refusals itself (bull-board's routes have bull-board's error handler, not the API's).
  app.addHook('onRequest', async (request, reply) => {
    reply.headers(adminQueuesHeaders);
    // bull-board refuses writes to a read-only queue too; this refuses them before any of its code runs.
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refusal = new ApiError('forbidden', 'the queue board is read-only: steer runs through /v1', {
        reason: 'read_only',
      });
      return sendError(reply, refusal);
    }
    if (!options.authenticated) return;
    const presented = presentedToken(request);
    if (presented !== undefined && matchesDigest(tokenDigests, presented)) {
      if (tokenInQuery(request) !== undefined) return redirectWithCookie(request, reply, presented);
      return;
    }
    const cookie = cookieOf(request.headers.cookie, adminQueuesCookie);
    if (cookie !== undefined && matchesDigest(cookieValues, cookie)) return;
    const message = `the queue board needs a token: open ${adminQueuesPath}?token=<token> once, or send Authorization: Bearer <token>`;
    return sendError(reply, new ApiError('unauthorized', message));
  });

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(adminQueuesPath);
  createBullBoard({
    queues: options.queues.map(
      (queue, shard) =>
        new BullMQAdapter(queue, {
          readOnlyMode: true,
          // Every shard's queue is named `steps`: the prefix keeps their names (and URLs) apart.
          prefix: `shard${shard}-`,
          displayName: `steps · shard ${shard}`,
          description: `Step jobs of shard ${shard} (keys ${queue.opts.prefix}:${queue.name}:*)`,
        }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Ratchet queues' } },
  });
  // bull-board's routes answer errors with this handler, not the API's: the refusals of the API's own hooks
  // (the host guard's 403) must keep their status and shape, and a fault must not show its message.
  serverAdapter.setErrorHandler((error) => {
    let answer = toApiError(error);
    if (answer.isServerFault) {
      app.log.error({ err: error }, 'queue board request failed');
      answer = new ApiError('internal', 'the queue board failed; the server log has the cause');
    }
    return {
      // bull-board's type lists the statuses it answers with itself; its Fastify adapter sends any.
      status: answer.status as BoardStatus,
      body: { error: { code: answer.code, message: answer.message, details: answer.details } },
    };
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: adminQueuesPath });
};

type BoardStatus = NonNullable<ReturnType<Parameters<FastifyAdapter['setErrorHandler']>[0]>['status']>;

/** The token of `?token=` or of an Authorization: Bearer header. */
function presentedToken(request: FastifyRequest): string | undefined {
  return bearerToken(request.headers.authorization) ?? tokenInQuery(request);
}

function tokenInQuery(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  const token = query?.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

async function redirectWithCookie(request: FastifyRequest, reply: FastifyReply, token: string) {
  const url = new URL(request.url, 'http://board');
  url.searchParams.delete('token');
  // Dot segments in a matched path (`/admin/queues/static/../..//evil.example`) resolve elsewhere: the
  // redirect goes back to the board then, never to another path or host.
  const onBoard = url.pathname === adminQueuesPath || url.pathname.startsWith(`${adminQueuesPath}/`);
  const location = onBoard ? `${url.pathname}${url.search}` : adminQueuesPath;
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return reply
    .header(
      'set-cookie',
      `${adminQueuesCookie}=${cookieValueOf(token)}; Path=${adminQueuesPath}; HttpOnly; SameSite=Strict${secure}`,
    )
    .redirect(location, 303);
}

/** What the cookie holds for a token: it opens the board, and tells nothing of the token itself. */
function cookieValueOf(token: string): string {
  return createHmac('sha256', token).update('ratchet admin queues cookie v1').digest('base64url');
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
