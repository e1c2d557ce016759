import type { FastifyPluginAsync } from 'fastify';
import type { ApiMetrics } from '../telemetry/index.js';

/**
 * `GET /metrics` in Prometheus text (`telemetry.metrics.enabled`; docs/operations.md). Behind `api.tokens`
 * like every route: a Prometheus scrape config sends the token (`authorization: {credentials: …}`).
 */
export const metricsRoute: FastifyPluginAsync<{ metrics: ApiMetrics }> = async (app, options) => {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await options.metrics.scrape();
    return reply.type(options.metrics.contentType).send(text);
  });
};
