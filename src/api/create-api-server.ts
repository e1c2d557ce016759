import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { apiTokens, type RatchetConfig, registerConfigSecrets } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { ApiMetrics } from '../telemetry/index.js';
import { adminQueuesRoutes } from './admin-queues.js';
import type { ApiEngine } from './api-engine.js';
import { maxParamLength, toApiError } from './api-error.js';
import { bearerAuth } from './auth.js';
import { consoleRoutes } from './console-routes.js';
import { clientErrorHandler, installErrorHandler, sendError } from './error-handler.js';
import { frameGuard } from './frame-guard.js';
import { hostGuard, requestShapeGuard } from './host-guard.js';
import { installJsonBodyParser } from './json-body-parser.js';
import { jsonContentTypeGuard } from './json-content-type-guard.js';
import { metricsOffRoute, metricsRoute } from './metrics-route.js';
import { registerOpenApi } from './openapi.js';
import { installRequestTracing, requestsTraced, TracedLogController } from './request-tracing.js';
import { agentRoutes, runnableSummaries } from './routes/agent-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { externalEventRoutes } from './routes/external-event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { inboxRoutes } from './routes/inbox-routes.js';
import { inspectRoutes } from './routes/inspect-routes.js';
import { runIndexRoutes } from './routes/run-index-routes.js';
import { runRoutes } from './routes/run-routes.js';
import { scheduleRoutes } from './routes/schedule-routes.js';
import { sessionRoutes } from './routes/session-routes.js';
import { steerRoutes } from './routes/steer-routes.js';
import { webhookRoutes } from './routes/webhook-routes.js';
import type { SseConnection } from './sse-connection.js';
import { tenantScopedEngine } from './tenant-scoped-engine.js';

export interface ApiServerOptions {
  engine: ApiEngine;
  /** The loaded config: its `api` section (tokens, body limit, keep-alive) shapes the server. */
  config: RatchetConfig;
  logger: Logger;
  /**
   * The address the caller will listen on (not always `api.host`: the CLI may override it): the host guard
   * answers to it, and to any IP address when it is not a loopback address.
   */
  bindHost: string;
  /** Resolves when Redis answers (e.g. `() => redis.ping()`); /readyz calls it. */
  pingRedis: () => Promise<unknown>;
}

/**
 * The HTTP API: validates, records and enqueues through the engine, and streams the event log. It never
 * runs a model or a tool. The caller listens (`app.listen({host, port})`) and closes it; closing ends the
 * open event streams.
 */
export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const { api } = options.config;
  // Its tokens are hidden from the request log even when the config did not come from loadConfig.
  registerConfigSecrets(options.config);
  const app = Fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: options.logger,
    // A traced request's `incoming request` line comes from installRequestTracing, with its span's ids.
    ...(requestsTraced(options.config) ? { logController: new TracedLogController() } : {}),
    bodyLimit: api.body_limit_bytes,
    routerOptions: { maxParamLength },
    // Refusals Fastify and Node make before a route is known answer in the one error shape too.
    frameworkErrors: (error, _request, reply) =>
      sendError(reply, toApiError(error, { bodyLimitBytes: api.body_limit_bytes })),
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app, { bodyLimitBytes: api.body_limit_bytes });
  installJsonBodyParser(app);
  // Bodies are JSON or nothing: a text/plain body would otherwise reach the validator as a string.
  app.removeContentTypeParser('text/plain');
  // First, so a refused request is traced too (telemetry.traces; nothing when off).
  installRequestTracing(app, { config: options.config, engine: options.engine });
  // Before the token check: a request for a foreign host is refused whatever it carries.
  app.addHook('onRequest', requestShapeGuard());
  app.addHook(
    'onRequest',
    hostGuard({
      bindHost: options.bindHost,
      allowedHosts: api.allowed_hosts,
      allowedOrigins: api.allowed_origins,
      authenticated: api.tokens.length > 0,
    }),
  );
  app.addHook('onRequest', bearerAuth(apiTokens(api.tokens)));
  // After the token: a client without one learns nothing more than 401.
  app.addHook('onRequest', jsonContentTypeGuard());
  app.addHook('onSend', frameGuard());

  const openStreams = new Set<SseConnection>();
  app.addHook('preClose', async () => {
    for (const stream of openStreams) stream.close();
  });

  // Every route reaches the engine scoped by its caller's tenant (decision 0035).
  const engine = tenantScopedEngine(options.engine);
  registerOpenApi(app, { authenticated: api.tokens.length > 0 });
  app.register(healthRoutes, { pingRedis: options.pingRedis, pingTimeoutMs: api.redis_timeout_ms });
  const v1 = { prefix: '/v1' };
  app.register(sessionRoutes, { ...v1, engine });
  app.register(runRoutes, { ...v1, engine });
  app.register(steerRoutes, { ...v1, engine });
  app.register(externalEventRoutes, { ...v1, engine });
  app.register(runIndexRoutes, { ...v1, engine });
  app.register(inboxRoutes, { ...v1, engine });
  app.register(webhookRoutes, { ...v1, engine });
  app.register(eventRoutes, { ...v1, engine, keepAliveMs: api.keepalive_ms, openStreams });
  app.register(agentRoutes, { ...v1, agents: runnableSummaries(options.config), engine });
  app.register(inspectRoutes, { ...v1, engine, config: options.config });
  app.register(scheduleRoutes, { ...v1, engine });
  app.register(consoleRoutes);
  if (options.config.telemetry.metrics.enabled) {
    const metrics = new ApiMetrics({
      systemState: () => options.engine.systemState(),
      followers: () => openStreams.size,
      oldestPendingQuestions: () => options.engine.oldestPendingQuestions(),
    });
    // Runs and questions this process closes are counted here (a worker never sees an API cancellation).
    const stopRuns = options.engine.onRunCancelled((record) => metrics.runCancelled(record));
    const stopQuestions = options.engine.onQuestionClosed((question, at) =>
      // The cancel-run script hands over the closed record; an answer, the question as it was pending.
      metrics.questionClosed(question, at, question.status === 'cancelled' ? 'cancelled' : 'answered'),
    );
    app.addHook('onClose', async () => {
      stopRuns();
      stopQuestions();
    });
    app.register(metricsRoute, { metrics });
  } else {
    app.register(metricsOffRoute);
  }
  if (api.admin_queues)
    app.register(adminQueuesRoutes, {
      queues: options.engine.stepQueues(),
      tokens: apiTokens(api.tokens).flatMap((entry) => (entry.tenant === undefined ? [entry.token] : [])),
      authenticated: api.tokens.length > 0,
    });
  return app;
}
