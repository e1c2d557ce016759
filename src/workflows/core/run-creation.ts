import type { Message, Part } from '../../chat/index.js';
import { buildEvent, type StoredEvent } from '../../events/event.js';
import { zeroUsage } from '../../models/usage.js';
import { defaultRunPriority, defaultTenant } from '../../schemas/index.js';
import { messageId } from '../ids.js';
import type { IterationJobData, RunInheritance, TeamTurnJobData } from '../job-data.js';
import { type Budget, inputLineMaxChars, type RunRecord, type ScheduleOrigin } from '../run-record.js';

/** A definition to record with a run (decision 0030): its hash and the canonical JSON stored at `def:<hash>`. */
export interface DefinitionToRecord {
  hash: string;
  text: string;
}

import type { SessionRecord } from '../session-record.js';

export interface RunCreation {
  record: RunRecord;
  /** The run's input, appended to its chat. */
  messages: Message[];
  events: StoredEvent[];
  /** Written only when the session is new. */
  sessionRecord: SessionRecord | undefined;
  /** The definition the run works under, stored (once per hash) before the run is written. */
  definition?: DefinitionToRecord | undefined;
  /** The first step, with its kind (its BullMQ job name). */
  first: { kind: 'iteration'; data: IterationJobData } | { kind: 'team-turn'; data: TeamTurnJobData };
}

/** Everything a new run writes: its record, its input message, its first events and its first step. */
export function planRunCreation(input: {
  sessionId: string;
  runId: string;
  agent: string;
  chatId: string;
  parts: Part[];
  newSession: { metadata: Record<string, unknown> } | undefined;
  chatLength: number;
  now: string;
  /** The agent's display prefix in clients. */
  prefix?: string;
  budget?: Budget;
  /** For a child run: who started it (see RunRecord.parent) and the agents above it, nearest first. */
  parent?: RunRecord['parent'];
  lineage?: string[];
  /** The run's input as whole messages (a team member's synced view) instead of `parts`. */
  messages?: Message[];
  /** A team's run is a chain of team turns; any other run a chain of iterations. */
  team?: boolean;
  /** A child run shares its tree root's budget, raises included. */
  budgetRaises?: number;
  rootRunId?: string;
  /** When the run (and its children) must be finished (RunRecord.deadline_at). */
  deadlineAt?: string;
  /** Fewer iterations than the agent allows, for this run only (RunRecord.max_iterations). */
  maxIterations?: number;
  /** The run's tenant (default `default`) and priority (default 5); a child run's are its root's. */
  tenant?: string;
  priority?: number;
  /** The schedule and fire time that start the run (RunRecord.origin). */
  origin?: ScheduleOrigin;
  /** The resolved definition of the run's agent (decision 0030); none: its workers' config is used. */
  definition?: DefinitionToRecord;
  /**
   * What the run takes from above it (decision 0047), carried by each of its steps; none: its workers'
   * config decides (a run started before this was recorded). Its `lineage` has one hash per name of `lineage`.
   */
  inherited?: RunInheritance;
}): RunCreation {
  const { sessionId, runId, agent, chatId, parts, now } = input;
  const messages: Message[] = input.messages ?? [
    { id: messageId.input(runId), sender: 'user', role: 'user', parts, metadata: {}, created_at: now },
  ];
  const record = newRunRecord({
    id: runId,
    session_id: sessionId,
    agent,
    chat_id: chatId,
    budget: input.budget ?? null,
    budget_raises: input.budgetRaises ?? 0,
    parent: input.parent ?? null,
    root_run_id: input.rootRunId ?? null,
    lineage: input.lineage ?? [],
    prefix: input.prefix ?? '🤖',
    deadline_at: input.deadlineAt ?? null,
    max_iterations: input.maxIterations ?? null,
    origin: input.origin ?? null,
    // A team member's task, not the team's chat it is given as its input.
    input_line: inputLineOf(parts),
    definition: input.definition ? { hash: input.definition.hash, recorded_at: now } : null,
    tenant: input.tenant ?? defaultTenant,
    priority: input.priority ?? defaultRunPriority,
    now,
  });
  const inputText = messages
    .flatMap((message) => message.parts)
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n');
  const place: TeamTurnJobData = {
    v: 2,
    session_id: sessionId,
    run_id: runId,
    agent,
    chat_id: chatId,
    iteration: 1,
    ...(record.lineage.length > 0 ? { lineage: record.lineage } : {}),
    ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
    ...(record.definition ? { definition: record.definition.hash } : {}),
    ...(input.inherited && input.inherited.lineage.length === record.lineage.length
      ? { inherited: input.inherited }
      : {}),
  };
  return {
    record,
    ...(input.definition ? { definition: input.definition } : {}),
    messages,
    events: [
      buildEvent('run_started', record, { input: inputText }, now),
      buildEvent(
        'agent_start',
        record,
        {
          parent_run_id: record.parent?.run_id ?? null,
          depth: record.parent?.depth ?? 0,
          prefix: record.prefix,
        },
        now,
      ),
      ...messages.map((message, offset) =>
        buildEvent(
          'message_added',
          record,
          { chat_id: chatId, index: input.chatLength + offset, message },
          now,
        ),
      ),
    ],
    sessionRecord: input.newSession
      ? {
          v: 1,
          id: sessionId,
          agent,
          metadata: input.newSession.metadata,
          created_at: now,
          tenant: record.tenant,
        }
      : undefined,
    first: input.team
      ? { kind: 'team-turn', data: place }
      : { kind: 'iteration', data: { ...place, previous_calls: 0 } },
  };
}

/**
 * When a new run must be finished (RunRecord.deadline_at): `timeoutS` from `now`, or the deadline it
 * inherits (a child run's parent's) when that is sooner; undefined when it has neither.
 */
export function runDeadline(
  now: Date,
  timeoutS: number | undefined,
  inherited?: string | null,
): string | undefined {
  const own = timeoutS === undefined ? Number.POSITIVE_INFINITY : now.getTime() + timeoutS * 1000;
  const soonest = Math.min(own, inherited ? Date.parse(inherited) : Number.POSITIVE_INFINITY);
  return Number.isFinite(soonest) ? new Date(soonest).toISOString() : undefined;
}

/** What a new run is given; every other field of its record starts empty (queued, no usage, no result). */
export type NewRunFields = Pick<
  RunRecord,
  | 'id'
  | 'session_id'
  | 'agent'
  | 'chat_id'
  | 'budget'
  | 'budget_raises'
  | 'parent'
  | 'root_run_id'
  | 'lineage'
  | 'prefix'
  | 'deadline_at'
  | 'max_iterations'
  | 'origin'
  | 'input_line'
  | 'tenant'
  | 'priority'
> & { now: string; definition?: RunRecord['definition'] };

/** The record of a run that has done nothing yet: a new run, a child run or a fork. */
export function newRunRecord(fields: NewRunFields): RunRecord {
  // In the schema's order, as every later commit writes it: the run index reads the status off the front of
  // the JSON (includes/run-index.lua) without decoding it.
  return {
    v: 1,
    id: fields.id,
    session_id: fields.session_id,
    agent: fields.agent,
    chat_id: fields.chat_id,
    status: 'queued',
    iteration: 0,
    usage: { ...zeroUsage },
    cost_usd: 0,
    retry_waste: { calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    budget: fields.budget,
    budget_raises: fields.budget_raises,
    guardrail_retries: 0,
    parent: fields.parent,
    root_run_id: fields.root_run_id,
    lineage: fields.lineage,
    prefix: fields.prefix,
    deadline_at: fields.deadline_at,
    max_iterations: fields.max_iterations,
    tool_calls: { count: 0, names: [] },
    sub_goals: null,
    orchestration_steps: 0,
    partial: null,
    partial_results: {},
    confidence: null,
    contract: null,
    schema_version: null,
    origin: fields.origin,
    retried_by: null,
    input_line: fields.input_line,
    definition: fields.definition ?? null,
    tenant: fields.tenant,
    priority: fields.priority,
    result: null,
    error: null,
    created_at: fields.now,
    updated_at: fields.now,
    started_at: null,
    finished_at: null,
  };
}

/**
 * The first line of an input that holds text, with its runs of white space made one space and cut to
 * `inputLineMaxChars` (an ellipsis marks a cut); null when no part holds text. Cut by code points, so a cut
 * never splits a character.
 */
export function inputLineOf(parts: readonly Part[]): string | null {
  const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  const line = text
    .split(/\r\n|\r|\n/)
    .map((candidate) => candidate.replace(/\s+/g, ' ').trim())
    .find((candidate) => candidate !== '');
  if (line === undefined) return null;
  if (line.length <= inputLineMaxChars) return line;
  let cut = '';
  for (const character of line) {
    if (cut.length + character.length > inputLineMaxChars - 1) break;
    cut += character;
  }
  return `${cut.trimEnd()}…`;
}
