import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { RatchetError } from '../../errors/index.js';
import {
  agentDetailSchema,
  agentListSchema,
  agentMemorySchema,
  agentParamsSchema,
} from '../../wire/index.js';
import type { ApiEngine } from '../api-engine.js';
import { errorResponses } from '../error-responses.js';

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

  app.get(
    '/agents/:name',
    {
      schema: {
        tags: ['agents'],
        summary: 'An agent, and the definitions its unfinished runs work under (for draining old workers)',
        params: agentParamsSchema,
        response: { 200: agentDetailSchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { name } = request.params;
      const configured = agents.find((agent) => agent.name === name);
      const definitions = await engine.agentDefinitions(name);
      // A name the config lost is still shown while unfinished runs of it remain: they are what to wait for.
      if (!configured && definitions.in_use.length === 0) {
        throw new RatchetError('agent_not_found', `no agent is named "${name}", and no unfinished run is`);
      }
      return {
        name,
        description: configured?.description ?? '',
        kind: configured?.kind ?? null,
        definition: definitions.current,
        definitions_in_use: definitions.in_use,
        truncated: definitions.truncated,
      };
    },
  );

  app.get(
    '/agents/:name/memory',
    {
      schema: {
        tags: ['agents'],
        summary: 'What an agent remembers across sessions: its notes and the deployment’s',
        params: agentParamsSchema,
        response: { 200: agentMemorySchema, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { name } = request.params;
      if (!agents.some((agent) => agent.name === name && agent.kind === 'agent')) {
        throw new RatchetError('agent_not_found', `no agent is named "${name}"`);
      }
      return agentMemoryOf(engine, name);
    },
  );
};

/** An agent's memory as the wire shows it. */
export async function agentMemoryOf(
  engine: ApiEngine,
  agent: string,
): Promise<z.infer<typeof agentMemorySchema>> {
  const notes = await engine.agentMemory(agent);
  return {
    agent,
    notes: notes.map((note) => ({
      name: note.name,
      scope: note.scope,
      content: note.content,
      written_by: { agent: note.agent, session_id: note.session_id, run_id: note.run_id },
      updated_at: note.updated_at,
      expires_at: note.expires_at,
    })),
  };
}

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
