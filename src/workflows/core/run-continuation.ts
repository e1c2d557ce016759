import { type Message, type Part, toolCallsOf } from '../../chat/index.js';
import { RatchetError } from '../../errors/index.js';
import { buildEvent, type StoredEvent } from '../../events/event.js';
import { messageId } from '../ids.js';
import type { IterationJobData, RunInheritance } from '../job-data.js';
import type { ReplyEntry } from '../journal.js';
import { type Budget, continuationOf, type RunOrigin, type RunRecord } from '../run-record.js';
import type { SessionRecord } from '../session-record.js';
import { toolResultMessage } from './run-commits.js';
import { type DefinitionToRecord, inputLineOf, newRunRecord } from './run-creation.js';

/**
 * Retry and fork (decision 0022): a new run that continues what another run recorded, so that no recorded
 * model reply or tool result is paid for again. Pure: the shell reads what is named here and writes the plan
 * in one atomic script, with the first step.
 */

/** What a continuing run may ask for anew; each at most what its agent allows (the engine checks). */
export interface ContinuationLimits {
  /** The current definition of the continuing run's agent (decision 0030): a fork to another agent takes it. */
  definition?: DefinitionToRecord;
  /** What a new root run inherits where the engine starts it (decision 0047): its `options.delegate` default. */
  inherited?: RunInheritance;
  budget?: Budget;
  deadlineAt?: string;
  maxIterations?: number;
}

/** Where a retried run stopped: its last recorded reply and what became of that reply's tool calls. */
export interface RetryPoint {
  /** The journal's `reply:<n>` of the run's last recorded iteration (undefined before the first). */
  lastReply: ReplyEntry | undefined;
  /**
   * The tool calls of that reply as the chat holds them (a reply that failed on max_iterations records none
   * in its journal entry, but its message still asks for them, and a provider wants a result for each).
   */
  calls: { id: string; name: string }[];
  /** Whether that reply's tool results are in the chat (`results:<n>` recorded). */
  resultsAppended: boolean;
  /** Each call's recorded result entry (`tool:<n>:<k>:entry`), in call order; undefined: no outcome. */
  recordedResults: (Message | undefined)[];
  /** Whether each call's intent was recorded (its handler started). */
  startedCalls: boolean[];
  /** The chat's length now. */
  chatLength: number;
}

export interface RunContinuation {
  record: RunRecord;
  /** Chat entries the new run appends before its first step (a cancelled batch's results). */
  messages: Message[];
  /** Events for the new run's session, in order. */
  events: StoredEvent[];
  first: { kind: 'iteration'; data: IterationJobData };
}

export interface RetryPlan extends RunContinuation {
  /** The retried run's record, naming its retry. */
  retried: RunRecord;
  /** Journal fields of the retried run copied to the new run's journal (the last reply's numbers). */
  journalFields: string[];
}

/** Why a run cannot be retried, or nothing when it can. */
export function retryRefusal(record: RunRecord, team: boolean): string | undefined {
  if (record.status !== 'failed' && record.status !== 'cancelled')
    return `run ${record.id} is ${record.status}: only a failed or cancelled run can be retried`;
  if (record.retried_by !== null)
    return `run ${record.id} was retried already by ${record.retried_by}: retry that run instead`;
  if (record.parent !== null)
    return `run ${record.id} is a child run: its parent recorded its result; retry the root run ${record.root_run_id ?? record.parent.run_id}`;
  if (team) return `run ${record.id} is a team's run: team runs cannot be retried yet`;
  return undefined;
}

/**
 * A retry: a new run of the same agent on the same chat, with the counters of the run it continues
 * (iterations, usage, tool calls), so max_iterations and the budget count the whole of the work. Its first
 * step is the iteration after the last recorded reply; a batch of tool calls that the run left without
 * results (cancelled mid-call, or failed on max_iterations before they ran) gets its recorded results, and an
 * error result for each call without one, so the chat is whole again and nothing recorded runs twice.
 */
export function planRetry(input: {
  retried: RunRecord;
  point: RetryPoint;
  runId: string;
  limits: ContinuationLimits;
  now: string;
}): RetryPlan {
  const { retried, point, runId, now } = input;
  const iteration = retried.iteration;
  const record: RunRecord = {
    ...retried,
    id: runId,
    status: 'queued',
    budget: input.limits.budget ?? retried.budget,
    deadline_at: input.limits.deadlineAt ?? null,
    max_iterations: input.limits.maxIterations ?? retried.max_iterations,
    origin: {
      kind: 'retry',
      run_id: retried.id,
      session_id: retried.session_id,
      at_iteration: null,
      input_run_id: continuationOf(retried)?.input_run_id ?? retried.id,
    },
    retried_by: null,
    partial: null,
    result: null,
    error: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    finished_at: null,
  };
  const messages = missingResults(retried, point, now);
  const events: StoredEvent[] = [
    buildEvent('run_retried', record, { retried_run_id: retried.id, from_iteration: iteration }, now),
    ...startEvents(record, '', now),
    ...messages.map((message, offset) =>
      buildEvent(
        'message_added',
        record,
        { chat_id: record.chat_id, index: point.chatLength + offset, message },
        now,
      ),
    ),
  ];
  return {
    record,
    retried: { ...retried, retried_by: runId, updated_at: now },
    messages,
    events,
    journalFields: iteration > 0 ? [`reply:${iteration}`] : [],
    first: { kind: 'iteration', data: firstIteration(record, iteration + 1, input.limits.inherited) },
  };
}

/** The results a batch left without them: the recorded ones, and an error result for each call cut short. */
function missingResults(retried: RunRecord, point: RetryPoint, now: string): Message[] {
  const reply = point.lastReply;
  if (!reply || point.calls.length === 0 || point.resultsAppended) return [];
  if (point.chatLength !== reply.index + 1) {
    throw new RatchetError(
      'run_not_retryable',
      `run ${retried.id}: its chat has ${point.chatLength} entries after its last reply at ${reply.index}, so another run wrote to it; start a new run instead`,
    );
  }
  const stopped = retried.error?.code ?? retried.status;
  return point.calls.map(
    (call, index) =>
      point.recordedResults[index] ??
      toolResultMessage({
        runId: retried.id,
        iteration: retried.iteration,
        index,
        call,
        content: point.startedCalls[index]
          ? `the run stopped (${stopped}) while this call ran: it may or may not have taken effect. ` +
            'Call it again if it is still needed.'
          : `the run stopped (${stopped}) before this call ran: it did not run. Call it again if it is still needed.`,
        isError: true,
        now,
      }),
  );
}

export interface ForkPlan extends RunContinuation {
  sessionRecord: SessionRecord;
  /** How many of the original chat's entries the new session's chat starts with. */
  copied: number;
  /** The event recorded in the original session's log. */
  originEvent: StoredEvent;
}

/**
 * The run that recorded iteration `at` in a chain of retries: `chain` starts with the run asked for, each
 * next record being the run the one before retried. A retry counts on from the run it retried, whose
 * iterations (through its last) stay that run's: their reply, guardrail feedback and tool results carry its
 * ids, even the last one's, whose reply the retry copies to its own journal (its next request is planned from
 * the same numbers). So the iteration belongs to the earliest run in the chain whose count reaches it.
 */
export function recorderOf(chain: readonly RunRecord[], at: number): RunRecord {
  const [asked] = chain;
  if (!asked) throw new Error('a chain of retries starts with the run asked for');
  let recorder = asked;
  for (const retried of chain.slice(1)) {
    if (at > retried.iteration) break;
    recorder = retried;
  }
  return recorder;
}

/**
 * How many chat entries a fork at iteration `at` copies: through that iteration's reply, the feedback an
 * output guardrail added to it, and its tool results (a fork cannot start from calls without results).
 * `after` are the chat's entries from the reply on.
 */
export function forkLength(
  original: RunRecord,
  at: number,
  reply: ReplyEntry,
  after: readonly Message[],
): number {
  // The calls as the reply's message holds them: a reply failed on max_iterations records none in its entry.
  const calls = after[0] ? toolCallsOf(after[0]) : [];
  const feedback = messageId.guardrailFeedback(original.id, at);
  const results = new Set(calls.map((_call, index) => messageId.toolResult(original.id, at, index)));
  let length = reply.index + 1;
  let found = 0;
  for (const message of after.slice(1)) {
    if (message.id !== feedback && !results.has(message.id)) break;
    if (message.id !== feedback) found += 1;
    length += 1;
  }
  if (found < calls.length) {
    throw new RatchetError(
      'invalid_run_settings',
      `at_iteration: iteration ${at} of run ${original.id} called tools whose results are not all recorded; fork at another iteration`,
      { details: { field: 'at_iteration', limit: original.iteration } },
    );
  }
  return length;
}

/**
 * A fork: a new session whose chat starts as a copy of the original's first `copied` entries, and a new run
 * that continues from there, with a new user message when one is given, for the original's agent or
 * another. It counts from zero: what it pays for is what comes after the fork point.
 */
export function planFork(input: {
  original: RunRecord;
  at: number;
  copied: number;
  sessionId: string;
  runId: string;
  agent: string;
  prefix: string;
  parts: Part[] | undefined;
  limits: ContinuationLimits;
  metadata: Record<string, unknown>;
  now: string;
}): ForkPlan {
  const { original, at, sessionId, runId, agent, now } = input;
  const origin: RunOrigin = {
    kind: 'fork',
    run_id: original.id,
    session_id: original.session_id,
    at_iteration: at,
    input_run_id: input.parts ? runId : (continuationOf(original)?.input_run_id ?? original.id),
  };
  const record = newRunRecord({
    id: runId,
    session_id: sessionId,
    agent,
    chat_id: original.chat_id,
    budget: input.limits.budget ?? null,
    budget_raises: 0,
    parent: null,
    root_run_id: null,
    lineage: [],
    prefix: input.prefix,
    deadline_at: input.limits.deadlineAt ?? null,
    max_iterations: input.limits.maxIterations ?? null,
    origin,
    // The original's agent keeps its definition (a fork goes on as the original would); another agent's is
    // its current one.
    definition:
      agent === original.agent && original.definition
        ? original.definition
        : input.limits.definition
          ? { hash: input.limits.definition.hash, recorded_at: now }
          : null,
    // A fork with a message of its own is about that message; one without goes on with the original's task.
    input_line: input.parts ? (inputLineOf(input.parts) ?? original.input_line) : original.input_line,
    // A fork stays with its original's tenant (its new session too), at its priority.
    tenant: original.tenant,
    priority: original.priority,
    now,
  });
  const messages: Message[] = input.parts
    ? [
        {
          id: messageId.input(runId),
          sender: 'user',
          role: 'user',
          parts: input.parts,
          metadata: {},
          created_at: now,
        },
      ]
    : [];
  const inputText = (input.parts ?? [])
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n');
  return {
    record,
    sessionRecord: {
      v: 1,
      id: sessionId,
      agent,
      metadata: input.metadata,
      created_at: now,
      tenant: original.tenant,
    },
    copied: input.copied,
    messages,
    events: [
      ...startEvents(record, inputText, now),
      ...messages.map((message, offset) =>
        buildEvent(
          'message_added',
          record,
          { chat_id: record.chat_id, index: input.copied + offset, message },
          now,
        ),
      ),
    ],
    originEvent: buildEvent(
      'run_forked',
      record,
      { from_run_id: original.id, fork_session_id: sessionId, at_iteration: at },
      now,
    ),
    first: { kind: 'iteration', data: firstIteration(record, 1, input.limits.inherited) },
  };
}

function startEvents(record: RunRecord, input: string, now: string): StoredEvent[] {
  const origin = continuationOf(record);
  return [
    buildEvent('run_started', record, { input }, now),
    buildEvent(
      'agent_start',
      record,
      {
        parent_run_id: null,
        depth: 0,
        prefix: record.prefix,
        ...(origin
          ? {
              origin: {
                kind: origin.kind,
                run_id: origin.run_id,
                session_id: origin.session_id,
                at_iteration: origin.at_iteration,
              },
            }
          : {}),
      },
      now,
    ),
  ];
}

/**
 * The first step of a continuing run. It inherits what its engine gives a new root run (decision 0047); a
 * retried child run, whose ancestors' definitions are not in its record, takes them from its workers' config.
 */
function firstIteration(
  record: RunRecord,
  iteration: number,
  inherited: RunInheritance | undefined,
): IterationJobData {
  return {
    v: 2,
    session_id: record.session_id,
    run_id: record.id,
    agent: record.agent,
    chat_id: record.chat_id,
    iteration,
    previous_calls: 0,
    ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
    ...(record.definition ? { definition: record.definition.hash } : {}),
    ...(inherited && inherited.lineage.length === record.lineage.length ? { inherited } : {}),
  };
}
