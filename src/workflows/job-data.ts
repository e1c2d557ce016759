import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';

/** Where every step job of a run runs. Job data carries references, never transcripts or secrets. */
const runPlaceFields = {
  v: z.literal(1),
  session_id: z.string(),
  run_id: z.string(),
  /** The agent the step runs for (a team's name for its turns): for log lines; the run record rules. */
  agent: z.string(),
  /** The chat the run works on (the run record says the same; here it saves a round trip). */
  chat_id: z.string(),
  /** The iteration (a team's turn) the step belongs to. */
  iteration: z.number().int().positive(),
  /**
   * The run's deadline (RunRecord.deadline_at), so the worker bounds the step before reading anything:
   * it aborts the step's model or tool call at the deadline, and parks no step past it.
   */
  deadline_at: z.iso.datetime().optional(),
  /**
   * The root of a child run's tree (RunRecord.root_run_id), so a step that reads no run record (a tool call)
   * still knows the run's trace (decision 0024); absent for a root run.
   */
  root_run_id: z.string().optional(),
};

/** Iteration n of an agent's run. Version 1. */
export const iterationJobDataSchema = z.strictObject({
  ...runPlaceFields,
  /** Tool calls of the previous iteration, whose results this iteration appends first. */
  previous_calls: z.number().int().nonnegative(),
  /** The handoff group the run belongs to (its `agent` is then the member in control); absent otherwise. */
  group: z.string().optional(),
  /** A child run's agents above it, nearest first (their toolboxes follow the agent's own); absent for a root run. */
  lineage: z.array(z.string()).optional(),
});
export type IterationJobData = z.infer<typeof iterationJobDataSchema>;

/**
 * Turn n of a team's run: the team's state (turns taken, member cursors) is in the journal, so the job
 * carries only where the run is and which turn it is. Version 1.
 */
export const teamTurnJobDataSchema = z.strictObject({
  ...runPlaceFields,
  /** Written (always 0) by versions whose team turns reused the iteration's job data; ignored. */
  previous_calls: z.literal(0).optional(),
  lineage: z.array(z.string()).optional(),
});
export type TeamTurnJobData = z.infer<typeof teamTurnJobDataSchema>;

export const toolJobDataSchema = z.strictObject({
  ...runPlaceFields,
  /** Which call of the reply (0-based), of how many. */
  index: z.number().int().nonnegative(),
  calls: z.number().int().positive(),
  /** The tool the model called (decides approval before the call is read). */
  tool_name: z.string(),
  /** Position of the reply that made the call in the chat. */
  reply_index: z.number().int().nonnegative(),
  /** The handoff group of the run, when `agent` is a member of one. */
  group: z.string().optional(),
  /** A child run's agents above it, nearest first (their toolboxes follow the agent's own); absent for a root run. */
  lineage: z.array(z.string()).optional(),
});
export type ToolJobData = z.infer<typeof toolJobDataSchema>;

/** What every step job of a run carries about where it runs. */
type RunPlace = Pick<
  IterationJobData,
  'session_id' | 'run_id' | 'agent' | 'chat_id' | 'group' | 'lineage' | 'deadline_at' | 'root_run_id'
>;

function placeOf(data: RunPlace): RunPlace {
  return {
    session_id: data.session_id,
    run_id: data.run_id,
    agent: data.agent,
    chat_id: data.chat_id,
    ...(data.group ? { group: data.group } : {}),
    ...(data.lineage && data.lineage.length > 0 ? { lineage: data.lineage } : {}),
    ...(data.deadline_at ? { deadline_at: data.deadline_at } : {}),
    ...(data.root_run_id ? { root_run_id: data.root_run_id } : {}),
  };
}

/** The jobs of the tool calls of iteration n's reply (at chat position `replyIndex`), in call order. */
export function toolJobsOf(
  place: RunPlace,
  iteration: number,
  replyIndex: number,
  toolNames: readonly string[],
): ToolJobData[] {
  return toolNames.map((toolName, index) => ({
    v: 1,
    ...placeOf(place),
    iteration,
    index,
    calls: toolNames.length,
    tool_name: toolName,
    reply_index: replyIndex,
  }));
}

/** The iteration that follows a batch of tool calls: it appends nothing itself (the batch is in the chat). */
export function iterationAfterTools(tool: ToolJobData): IterationJobData {
  return { v: 1, ...placeOf(tool), iteration: tool.iteration + 1, previous_calls: tool.calls };
}

defineRecordKind({ name: 'job.iteration', version: 1, schema: iterationJobDataSchema });
defineRecordKind({ name: 'job.team-turn', version: 1, schema: teamTurnJobDataSchema });
defineRecordKind({ name: 'job.tool', version: 1, schema: toolJobDataSchema });
