import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { healthSchema, readinessSchema } from '../../wire/index.js';
import { answersWithin } from '../answers-within.js';
import { ApiError } from '../api-error.js';
import { errorResponses } from '../error-responses.js';

export interface HealthRoutesOptions {
  /** Resolves when Redis answers a PING. */
  pingRedis: () => Promise<unknown>;
  /** How long readiness waits for Redis before saying it is unreachable. */
  pingTimeoutMs: number;
}

const tags = ['health'];

/**
 * Liveness (the process answers) and readiness (Redis answers; the config was loaded, since the server is
 * built from it). Both answer without a token, for load balancers and orchestrators.
 */
export const healthRoutes: FastifyPluginAsyncZod<HealthRoutesOptions> = async (app, options) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: { tags, summary: 'The process is up', response: { 200: healthSchema } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Redis is reachable and the config is loaded',
        response: { 200: readinessSchema, ...errorResponses(503) },
      },
    },
    async () => {
      if (!(await answersWithin(options.pingRedis, options.pingTimeoutMs))) {
        throw new ApiError('unavailable', 'Redis does not answer', {
          checks: { redis: 'unreachable', config: 'ok' },
        });
      }
      return { status: 'ready' as const, checks: { redis: 'ok' as const, config: 'ok' as const } };
    },
  );
};
