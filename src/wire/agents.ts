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

/** GET /v1/agents/:name: an agent, and the definitions its unfinished runs work under (decision 0030). */
export const agentDetailSchema = z
  .strictObject({
    name: z.string(),
    description: z.string(),
    kind: z
      .enum(['agent', 'handoff', 'team'])
      .nullable()
      .describe("null: the API's config no longer has this name, but unfinished runs of it do"),
    definition: z
      .string()
      .nullable()
      .describe("The hash of the name's definition in the API's config (null: not configured)"),
    definitions_in_use: z
      .array(
        z.strictObject({
          hash: z
            .string()
            .nullable()
            .describe("null: runs recorded before definitions were; they use their worker's config"),
          runs: z.number().int().nonnegative().describe('unfinished runs working under it'),
          current: z.boolean().describe("whether it is the definition of the API's config"),
        }),
      )
      .describe(
        'Most used first. A worker generation can be drained when no unfinished run uses its definitions.',
      ),
    truncated: z.boolean().describe('more unfinished runs than were counted (10000)'),
  })
  .meta({ id: 'AgentDetail' });

export const agentParamsSchema = z.strictObject({ name: z.string().min(1).max(200) });

export type AgentSummary = z.output<typeof agentListSchema>['agents'][number];
/** GET /v1/agents/:name: an agent and the definitions its unfinished runs work under. */
export type AgentDetail = z.output<typeof agentDetailSchema>;
/** GET /v1/agents/:name/memory: what an agent remembers across sessions (its notes and the deployment's). */
export type AgentMemory = z.output<typeof agentMemorySchema>;
export type MemoryNote = AgentMemory['notes'][number];
