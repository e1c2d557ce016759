import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  decodeCursor,
  encodeCursor,
  webhookDeliveryListQuerySchema,
  webhookDeliveryListSchema,
  webhookDeliveryParamsSchema,
  webhookDeliverySchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { ApiError } from '../api-error.js';
import { errorResponses } from '../error-responses.js';

/**
 * The webhook deliveries (decision 0034): GET /v1/webhooks/deliveries lists them newest first, with their
 * status, attempts, last error and next attempt; POST …/:id/redeliver sends one again now, with its
 * webhook-id. Deliveries are kept 7 days after they finish.
 */
export const webhookRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.get(
    '/webhooks/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Webhook deliveries, newest first, with their status, attempts, last error and next attempt',
        querystring: webhookDeliveryListQuerySchema,
        response: { 200: webhookDeliveryListSchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const before = cursor === undefined ? undefined : decodeCursor('webhook_deliveries', cursor);
      const page = await engine.listWebhookDeliveries({ limit, ...(before ? { before } : {}) });
      return {
        deliveries: page.deliveries,
        next_cursor: page.next === null ? null : encodeCursor('webhook_deliveries', page.next),
      };
    },
  );

  app.post(
    '/webhooks/deliveries/:id/redeliver',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Sends a delivery again now, with the same webhook-id',
        params: webhookDeliveryParamsSchema,
        response: { 200: webhookDeliverySchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => {
      const delivery = await engine.redeliverWebhook(request.params.id);
      if (delivery === undefined) {
        throw new ApiError('not_found', `unknown webhook delivery ${request.params.id}`, {
          resource: 'webhook_delivery',
        });
      }
      if (delivery === 'delivering') {
        throw new ApiError(
          'conflict',
          `webhook delivery ${request.params.id} is being delivered now: redeliver it once this attempt ends`,
          { reason: 'delivery_in_progress' },
        );
      }
      return delivery;
    },
  );
};
