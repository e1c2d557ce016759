import { z } from 'zod';

/** Job data carries references, never transcripts or secrets. Version 1. */
export const iterationJobDataSchema = z.strictObject({
  v: z.literal(1),
  session_id: z.string(),
  run_id: z.string(),
  /** The agent the step runs for: for log lines; the run record stays the source of truth. */
  agent: z.string(),
  /** The chat the run works on (the run record says the same; here it saves a round trip). */
  chat_id: z.string(),
  iteration: z.number().int().positive(),
  /** Tool calls of the previous iteration, whose results this iteration appends first. */
  previous_calls: z.number().int().nonnegative(),
  /** A child run's agents above it, nearest first (their toolboxes follow the agent's own); absent for a root run. */
  lineage: z.array(z.string()).optional(),
});
export type IterationJobData = z.infer<typeof iterationJobDataSchema>;

export const toolJobDataSchema = z.strictObject({
  v: z.literal(1),
  session_id: z.string(),
  run_id: z.string(),
  agent: z.string(),
  chat_id: z.string(),
  iteration: z.number().int().positive(),
  /** Which call of the reply (0-based), of how many. */
  index: z.number().int().nonnegative(),
  calls: z.number().int().positive(),
  /** The tool the model called (decides approval before the call is read). */
  tool_name: z.string(),
  /** Position of the reply that made the call in the chat. */
  reply_index: z.number().int().nonnegative(),
  /** A child run's agents above it, nearest first (their toolboxes follow the agent's own); absent for a root run. */
  lineage: z.array(z.string()).optional(),
});
export type ToolJobData = z.infer<typeof toolJobDataSchema>;
