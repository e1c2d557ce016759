import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { ApiEngine } from '../api-engine.js';
import { agentListSchema, errorResponses } from '../schemas.js';

export interface AgentSummary {
  name: string;
  description: string;
}

/** The agents a session or run may be started with, with their usage summed over all their runs. */
export const agentRoutes: FastifyPluginAsyncZod<{
  agents: readonly AgentSummary[];
  engine: ApiEngine;
}> = async (app, { agents, engine }) => {
  app.get(
    '/agents',
    {
      schema: {
        tags: ['agents'],
        summary: 'The configured agents',
        response: { 200: agentListSchema, ...errorResponses(401) },
      },
    },
    async () => listAgents(engine, agents),
  );
};

/** The configured agents with their usage, as the wire shows them (the HTTP route and the MCP tool). */
export async function listAgents(
  engine: ApiEngine,
  agents: readonly AgentSummary[],
): Promise<z.infer<typeof agentListSchema>> {
  return {
    agents: await Promise.all(
      agents.map(async ({ name, description }) => ({
        name,
        description,
        usage: await engine.agentUsage(name),
      })),
    ),
  };
}
