import { z } from 'zod';
import { usageTotalsSchema } from './usage-totals.js';

/** The configured agents on the wire (GET /v1/agents, /v1/agents/:name/memory). */

export const agentListSchema = z.strictObject({
  agents: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string(),
      kind: z
        .enum(['agent', 'handoff', 'team'])
        .describe('An agent, a handoff group or a team: each can be started like an agent.'),
      usage: usageTotalsSchema,
    }),
  ),
});

export const agentMemorySchema = z
  .strictObject({
    agent: z.string(),
    notes: z.array(
      z.strictObject({
        name: z.string(),
        scope: z
          .enum(['agent', 'deployment'])
          .describe("`agent`: the agent's own note; `deployment`: a note every agent reads"),
        content: z.string(),
        written_by: z.strictObject({ agent: z.string(), session_id: z.string(), run_id: z.string() }),
        updated_at: z.iso.datetime(),
        expires_at: z.iso.datetime().describe('when it is forgotten unless written again'),
      }),
    ),
  })
  .meta({ id: 'AgentMemory' });

export const agentParamsSchema = z.strictObject({ name: z.string().min(1).max(200) });

export type AgentSummary = z.output<typeof agentListSchema>['agents'][number];
/** GET /v1/agents/:name/memory: what an agent remembers across sessions (its notes and the deployment's). */
export type AgentMemory = z.output<typeof agentMemorySchema>;
export type MemoryNote = AgentMemory['notes'][number];
