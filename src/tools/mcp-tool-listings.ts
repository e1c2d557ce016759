import { z } from 'zod';

/** A tool as an MCP server lists it (read leniently: only what is used here). */
export const listedToolSchema = z.looseObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  annotations: z
    .looseObject({ readOnlyHint: z.boolean().optional(), idempotentHint: z.boolean().optional() })
    .optional(),
});
export type ListedTool = z.output<typeof listedToolSchema>;

/**
 * Where a server's tool list is kept between workers: a worker that starts while a server is down offers
 * the tools some worker listed last (their calls get an error result until the server is back), instead of
 * none, which would leave the model calling tools it was never told of. The port the MCP client's toolboxes
 * call; src/redis implements it.
 */
export interface McpToolListings {
  load(server: string): Promise<ListedTool[] | undefined>;
  save(server: string, tools: readonly ListedTool[]): Promise<void>;
}
