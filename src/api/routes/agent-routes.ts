import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { ApiEngine } from '../api-engine.js';
import { agentListSchema, errorResponses } from '../schemas.js';

export interface AgentSummary {
  name: string;
  description: string;
  /** An agent, a handoff group or a team: each can be started like an agent. */
  kind: 'agent' | 'handoff' | 'team';
}

/** Everything a run can be started with, in config order: agents, then handoff groups, then teams. */
export function runnableSummaries(config: {
  agents: readonly { name: string; description: string }[];
  handoffs: readonly { name: string; description: string }[];
  teams: readonly { name: string; description: string }[];
}): AgentSummary[] {
  const summary = (kind: AgentSummary['kind']) => (entry: { name: string; description: string }) => ({
    name: entry.name,
    description: entry.description,
    kind,
  });
  return [
    ...config.agents.map(summary('agent')),
    ...config.handoffs.map(summary('handoff')),
    ...config.teams.map(summary('team')),
  ];
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
        response: { 200: agentListSchema, ...errorResponses(401, 403, 503) },
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
      agents.map(async ({ name, description, kind }) => ({
        name,
        description,
        kind,
        usage: await engine.agentUsage(name),
      })),
    ),
  };
}
