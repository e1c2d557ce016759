import type { FastifyPluginAsync } from 'fastify';
import type { ApiMetrics } from '../telemetry/index.js';
import { ApiError } from './api-error.js';
import { currentCaller } from './caller-scope.js';

/**
 * `GET /metrics` in Prometheus text (`telemetry.metrics.enabled`; docs/operations.md). Behind `api.tokens`
 * like every route: a Prometheus scrape config sends the token (`authorization: {credentials: …}`).
 */
export const metricsRoute: FastifyPluginAsync<{ metrics: ApiMetrics }> = async (app, options) => {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    // Metrics count every tenant's runs: an operator's only (decision 0035).
    if (currentCaller().tenant !== undefined)
      throw new ApiError('not_found', 'unknown route', { resource: 'route' });
    const text = await options.metrics.scrape();
    return reply.type(options.metrics.contentType).send(text);
  });
};

/**
 * `GET /metrics` while `telemetry.metrics.enabled` is off: a 404 that says how to turn them on, rather than
 * the router's bare one, which reads as a wrong path or a wrong port to someone setting up a scrape.
 */
export const metricsOffRoute: FastifyPluginAsync = async (app) => {
  app.get('/metrics', { schema: { hide: true } }, async () => {
    throw new ApiError(
      'not_found',
      'metrics are off: set telemetry.metrics.enabled: true in the config and restart; the API then serves ' +
        'them here, and each worker on telemetry.metrics.worker_port (9464 by default)',
      { resource: 'metrics' },
    );
  });
};
