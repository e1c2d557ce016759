import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { definitionHashSchema } from './agent-definition.js';

/**
 * What a run takes from above it, recorded when it starts (decision 0047) so a deploy that changes the
 * worker's config does not change it: every step of the run uses it, whatever worker takes the step.
 */
export const runInheritanceSchema = z.strictObject({
  /**
   * The definitions (their hashes) the agents above a child run worked under when it started, nearest first,
   * one per name of `lineage`: the child inherits their toolboxes as those definitions have them. [] for a
   * run with nothing above it, a team's member and a handoff group's member in control.
   */
  lineage: z.array(definitionHashSchema).max(101),
  /**
   * `options.delegate` of an agent that does not set it (decision 0047): whether the config that started the
   * run's tree had more than one agent. A child takes its parent's.
   */
  delegate_default: z.boolean(),
});
export type RunInheritance = z.infer<typeof runInheritanceSchema>;

/** Where every step job of a run runs. Job data carries references, never transcripts or secrets. */
const runPlaceFields = {
  v: z.literal(2),
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
  /**
   * The hash of the definition the run works under (RunRecord.definition), so a step that reads no run
   * record (a tool call) resolves its agent from it without a round trip (decision 0030); absent for a run
   * without one.
   */
  definition: z.string().optional(),
  /**
   * What the run took from above it when it started (decision 0047); absent for a run started before that
   * was recorded, which takes its inherited toolboxes and `options.delegate` default from its worker's config.
   */
  inherited: runInheritanceSchema.optional(),
};

/** Iteration n of an agent's run. Version 2 (version 1 had no `inherited`). */
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
 * carries only where the run is and which turn it is. Version 2 (version 1 had no `inherited`).
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
  | 'session_id'
  | 'run_id'
  | 'agent'
  | 'chat_id'
  | 'group'
  | 'lineage'
  | 'deadline_at'
  | 'root_run_id'
  | 'definition'
  | 'inherited'
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
    ...(data.definition ? { definition: data.definition } : {}),
    ...(data.inherited ? { inherited: data.inherited } : {}),
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
    v: 2,
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
  return { v: 2, ...placeOf(tool), iteration: tool.iteration + 1, previous_calls: tool.calls };
}

// Version 2 added `inherited` (decision 0047), optional: a version 1 job is read as it was, and its run takes
// what it inherits from its worker's config, as before.
const addedInherited = { 1: (record: Record<string, unknown>) => record };
defineRecordKind({
  name: 'job.iteration',
  version: 2,
  schema: iterationJobDataSchema,
  migrations: addedInherited,
});
defineRecordKind({
  name: 'job.team-turn',
  version: 2,
  schema: teamTurnJobDataSchema,
  migrations: addedInherited,
});
defineRecordKind({ name: 'job.tool', version: 2, schema: toolJobDataSchema, migrations: addedInherited });
