import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { agentListSchema, errorResponses } from '../schemas.js';

export interface AgentSummary {
  name: string;
  description: string;
}

/** The agents a session or run may be started with. */
export const agentRoutes: FastifyPluginAsyncZod<{ agents: readonly AgentSummary[] }> = async (
  app,
  { agents },
) => {
  const body = { agents: agents.map(({ name, description }) => ({ name, description })) };
  app.get(
    '/agents',
    {
      schema: {
        tags: ['agents'],
        summary: 'The configured agents',
        response: { 200: agentListSchema, ...errorResponses(401) },
      },
    },
    async () => body,
  );
};
