import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  runParamsSchema,
  sendEventBodySchema,
  sentEventSchema,
  sentSignalSchema,
  signalRunBodySchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';

/** Events from outside that runs wait for and triggers start on (decision 0033). */
export const externalEventRoutes: FastifyPluginAsyncZod<{ engine: ApiEngine }> = async (app, { engine }) => {
  app.post(
    '/events',
    {
      schema: {
        tags: ['events'],
        summary:
          'Send an event to the deployment: every run waiting for its name (wait_for_event) whose match its payload contains receives it, a wait that starts within events.retention_s too, and each trigger of its name starts its run; the same id twice delivers once',
        body: sendEventBodySchema,
        response: { 200: sentEventSchema, ...errorResponses(400, 401, 403, 404, 413, 503) },
      },
    },
    async (request) => engine.sendEvent(request.body),
  );

  app.post(
    '/runs/:id/signal',
    {
      schema: {
        tags: ['runs'],
        summary:
          'Send a signal to one run: its wait_for_event for that name receives it (now, or when it waits later); the same id twice delivers once',
        params: runParamsSchema,
        body: signalRunBodySchema,
        response: { 200: sentSignalSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 503) },
      },
    },
    async (request) => engine.signalRun(request.params.id, request.body),
  );
};
