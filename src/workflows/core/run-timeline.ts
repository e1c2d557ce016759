import type { Message } from '../../chat/index.js';
import type { ContractResult } from '../../events/result-metadata.js';
import type { Usage } from '../../models/usage.js';
import type { AttemptNote, AttemptsEntry, ReplyEntry, ToolIntent, ToolOutcomeEntry } from '../journal.js';
import type { QuestionRecord } from '../question-record.js';
import { continuationOf, type RunRecord } from '../run-record.js';
import { runDurationMs } from './run-duration.js';
import { type ShownStatus, shownStatus } from './shown-status.js';

/**
 * A run's timeline (GET /v1/runs/:id/steps), built from what its steps recorded: the journal, the chat entries
 * of its replies and results, its questions and child runs. Pure: nothing is asked of a model or a tool, and
 * no clock is read (an open wait has no duration yet).
 */

/** What a failed attempt recorded (`failed:<job>:<attempt>`). */
export interface FailedAttemptRecord {
  attempt: number;
  at: string;
  code: string | null;
}

/** What the journal holds of one step job's executions. */
export interface StepAttemptRecords {
  jobId: string;
  attempts: AttemptsEntry | undefined;
  failed: readonly FailedAttemptRecord[];
}

export interface ToolCallRecords extends StepAttemptRecords {
  index: number;
  /** The call as its reply made it (the tool_call part), absent when the reply entry is not in the chat. */
  call: { id: string; name: string; arguments: string } | undefined;
  intent: ToolIntent | undefined;
  outcome: ToolOutcomeEntry | undefined;
  /** The call's result message (in the chat, or waiting in the journal for its batch). */
  result: Message | undefined;
  /** The questions its handler asked, and its approval. */
  questions: readonly QuestionRecord[];
  /** The runs it started (delegations, spawns). */
  children: readonly RunRecord[];
}

export interface IterationRecords extends StepAttemptRecords {
  iteration: number;
  reply: ReplyEntry | undefined;
  /** The reply's chat entry. */
  replyMessage: Message | undefined;
  /** The output guardrail's feedback, when it sent the answer back. */
  feedback: Message | undefined;
  /** Model calls started (`calls:<n>`), and summary calls (`summary-calls:<n>`). */
  modelCalls: number;
  summaryCalls: number;
  /** Where the compaction the reply's request was planned from ended, when iteration n made it. */
  compactedUpTo: number | undefined;
  /** What that compaction's summary request used and cost (undefined: not recorded, or no compaction). */
  summaryUsage?: { usage: Usage; costUsd: number } | undefined;
  /** Budget questions the iteration asked. */
  questions: readonly QuestionRecord[];
  /** Child runs the iteration itself started (a composite member of a handoff group). */
  children: readonly RunRecord[];
  tools: readonly ToolCallRecords[];
}

export interface TimelineRecords {
  run: RunRecord;
  iterations: readonly IterationRecords[];
  /** The next page's first iteration, or null. */
  nextFrom: number | null;
  /** How many characters of arguments and results are shown (the full size is given beside). */
  cutAt: number;
}

export type AttemptCause = AttemptNote['cause'];

export interface AttemptView {
  /** The execution's number among every execution of the step (1 = the first). */
  execution: number;
  worker: string;
  started_at: string;
  /** BullMQ's attempt number (failed attempts before it + 1). */
  attempt: number;
  cause: AttemptCause;
  /** For a retry: the code of the error that failed the attempt before it (null when not recorded). */
  retry_of: string | null;
  parked_at: string | null;
  wake_at: string | null;
}

export interface CutText {
  text: string;
  chars: number;
  cut: boolean;
}

export interface WaitView {
  kind: 'ask_user' | 'approval' | 'budget' | 'child_run' | 'rate_limit' | 'parked';
  /** The question's id, or the child run's. */
  id: string | null;
  started_at: string;
  ended_at: string | null;
  /** Null while the wait is open. */
  duration_ms: number | null;
  /** The question's or the child run's status; null for a park. */
  status: string | null;
}

export interface ToolCallView {
  index: number;
  id: string | null;
  name: string | null;
  arguments: CutText | null;
  result: CutText | null;
  is_error: boolean | null;
  /**
   * The ledger: `done` (an outcome recorded by the attempt that ran it), `rerun` (run again after a worker died
   * during the call), `outcome_unknown` (the worker died during the call and it was not run again), `running`
   * (an intent, no outcome yet), `not_started`.
   */
  ledger: 'done' | 'rerun' | 'outcome_unknown' | 'running' | 'not_started';
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  attempts: AttemptView[];
  attempts_total: number;
  approval: { status: string; decision: string | null; asked_at: string; answered_at: string | null } | null;
  waits: WaitView[];
}

export interface IterationView {
  iteration: number;
  job_id: string;
  /** `committed`: its reply is recorded. */
  state: 'committed' | 'in_progress';
  provider: string | null;
  model: string | null;
  decision: ReplyEntry['decision'] | null;
  tokens: {
    /** What the effects planned and estimated of the request (null: not recorded). */
    planned: number | null;
    sent_estimate: number | null;
    input: number;
    output: number;
    cached_input: number;
  } | null;
  cost_usd: number | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  model_calls: number;
  summary_calls: number;
  attempts: AttemptView[];
  attempts_total: number;
  effects_applied: string[];
  /**
   * The compaction iteration n made before its request: where its summary ends, and what the summary request
   * used and cost (null in journals recorded before they were kept). The run's usage counts it too.
   */
  compaction: {
    up_to: number;
    tokens: { input: number; output: number; cached_input: number } | null;
    cost_usd: number | null;
  } | null;
  verdict: {
    /** The output guardrail or schema sent the answer back, with its feedback. */
    answer_rejected: CutText | null;
    /** The handoff contract's check of the final answer. */
    contract: ContractResult | null;
  };
  tool_calls: ToolCallView[];
  waits: WaitView[];
}

export interface RunTimeline {
  run_id: string;
  agent: string;
  status: RunRecord['status'];
  /** The last iteration whose reply is recorded. */
  iterations: number;
  next_from: number | null;
  steps: IterationView[];
}

export function cutText(text: string, limit: number): CutText {
  const chars = text.length;
  return chars <= limit ? { text, chars, cut: false } : { text: text.slice(0, limit), chars, cut: true };
}

function durationMs(from: string | null | undefined, to: string | null | undefined): number | null {
  if (!from || !to) return null;
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

/** The executions of a step, each with the error that made it a retry. */
export function attemptViews(records: StepAttemptRecords): AttemptView[] {
  const notes = records.attempts?.attempts ?? [];
  const first = (records.attempts?.count ?? 0) - notes.length + 1;
  return notes.map((note, offset) => {
    const failed =
      note.cause === 'retry'
        ? records.failed.filter((entry) => entry.attempt < note.attempt).at(-1)
        : undefined;
    return {
      execution: first + offset,
      worker: note.worker,
      started_at: note.at,
      attempt: note.attempt,
      cause: note.cause,
      retry_of: failed ? (failed.code ?? null) : null,
      parked_at: note.parked_at ?? null,
      wake_at: note.wake_at ?? null,
    };
  });
}

function questionWait(question: QuestionRecord): WaitView {
  return {
    kind: question.kind,
    id: question.id,
    started_at: question.created_at,
    ended_at: question.answered_at,
    duration_ms: durationMs(question.created_at, question.answered_at),
    status: question.status,
  };
}

function childWait(child: RunRecord): WaitView {
  return {
    kind: 'child_run',
    id: child.id,
    started_at: child.created_at,
    ended_at: child.finished_at,
    duration_ms: durationMs(child.created_at, child.finished_at),
    status: child.status,
  };
}

/**
 * Parks not explained by a question or a child run: the time from the park to the next execution (a rate
 * limit's wait for an iteration; a state key's for a tool call).
 */
function parkWaits(
  attempts: readonly AttemptView[],
  explained: readonly WaitView[],
  kind: WaitView['kind'],
): WaitView[] {
  return attempts.flatMap((attempt, index) => {
    if (!attempt.parked_at) return [];
    const parkedAt = Date.parse(attempt.parked_at);
    const covered = explained.some((wait) => {
      const start = Date.parse(wait.started_at);
      const end = wait.ended_at ? Date.parse(wait.ended_at) : Number.POSITIVE_INFINITY;
      return start <= parkedAt && parkedAt <= end;
    });
    if (covered) return [];
    const next = attempts[index + 1];
    return [
      {
        kind,
        id: null,
        started_at: attempt.parked_at,
        ended_at: next?.started_at ?? null,
        duration_ms: durationMs(attempt.parked_at, next?.started_at),
        status: null,
      },
    ];
  });
}

function ledgerOf(tool: ToolCallRecords): ToolCallView['ledger'] {
  if (tool.outcome) return tool.outcome.interrupted ?? 'done';
  return tool.intent ? 'running' : 'not_started';
}

function toolCallView(tool: ToolCallRecords, cutAt: number): ToolCallView {
  const attempts = attemptViews(tool);
  const resultText = tool.result?.parts
    .map((part) => (part.type === 'tool_result' ? part.content : part.type === 'text' ? part.text : ''))
    .join('');
  const approval = tool.questions.find((question) => question.kind === 'approval');
  const decision = approval?.answer && typeof approval.answer === 'object' ? approval.answer.decision : null;
  const explained = [...tool.questions.map(questionWait), ...tool.children.map(childWait)];
  return {
    index: tool.index,
    id: tool.call?.id ?? null,
    name: tool.call?.name ?? null,
    arguments: tool.call ? cutText(tool.call.arguments, cutAt) : null,
    result: resultText === undefined ? null : cutText(resultText, cutAt),
    is_error: tool.outcome ? tool.outcome.is_error : null,
    ledger: ledgerOf(tool),
    started_at: tool.intent?.at ?? null,
    finished_at: tool.outcome?.at ?? null,
    duration_ms: durationMs(tool.intent?.at, tool.outcome?.at),
    attempts,
    attempts_total: tool.attempts?.count ?? 0,
    approval: approval
      ? {
          status: approval.status,
          decision: decision ?? (typeof approval.answer === 'string' ? approval.answer : null),
          asked_at: approval.created_at,
          answered_at: approval.answered_at,
        }
      : null,
    waits: [...explained, ...parkWaits(attempts, explained, 'parked')],
  };
}

function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function iterationView(records: IterationRecords, run: RunRecord, cutAt: number): IterationView {
  const { reply, replyMessage } = records;
  const attempts = attemptViews(records);
  const usage = replyMessage?.metadata.usage as
    | { input_tokens: number; output_tokens: number; cached_input_tokens: number }
    | undefined;
  const cost = replyMessage?.metadata.cost_usd;
  const startedAt = attempts[0]?.started_at ?? null;
  const finishedAt = reply ? (replyMessage?.created_at ?? null) : null;
  const explained = [...records.questions.map(questionWait), ...records.children.map(childWait)];
  const isLast = reply?.decision === 'final' && run.iteration === records.iteration;
  return {
    iteration: records.iteration,
    job_id: records.jobId,
    state: reply ? 'committed' : 'in_progress',
    provider: reply?.model?.provider ?? null,
    model: reply?.model?.model ?? null,
    decision: reply?.decision ?? null,
    tokens: usage
      ? {
          planned: reply?.context?.tokens ?? null,
          sent_estimate: reply?.context?.sent_estimate ?? null,
          input: usage.input_tokens,
          output: usage.output_tokens,
          cached_input: usage.cached_input_tokens,
        }
      : null,
    cost_usd: typeof cost === 'number' ? cost : null,
    // The first execution kept (older ones are counted in attempts_total only).
    started_at: startedAt,
    finished_at: finishedAt,
    duration_ms: durationMs(startedAt, finishedAt),
    model_calls: records.modelCalls,
    summary_calls: records.summaryCalls,
    attempts,
    attempts_total: records.attempts?.count ?? 0,
    effects_applied: reply?.context?.applied ?? [],
    compaction:
      records.compactedUpTo === undefined
        ? null
        : {
            up_to: records.compactedUpTo,
            tokens: records.summaryUsage
              ? {
                  input: records.summaryUsage.usage.input_tokens,
                  output: records.summaryUsage.usage.output_tokens,
                  cached_input: records.summaryUsage.usage.cached_input_tokens,
                }
              : null,
            cost_usd: records.summaryUsage?.costUsd ?? null,
          },
    verdict: {
      answer_rejected:
        reply?.decision === 'retry' && records.feedback ? cutText(textOf(records.feedback), cutAt) : null,
      contract: isLast ? run.contract : null,
    },
    tool_calls: records.tools.map((tool) => toolCallView(tool, cutAt)),
    waits: [...explained, ...parkWaits(attempts, explained, 'rate_limit')],
  };
}

export function buildRunTimeline(records: TimelineRecords): RunTimeline {
  const { run } = records;
  return {
    run_id: run.id,
    agent: run.agent,
    status: run.status,
    iterations: run.iteration,
    next_from: records.nextFrom,
    steps: records.iterations.map((iteration) => iterationView(iteration, run, records.cutAt)),
  };
}

export interface TreeTokens {
  input: number;
  output: number;
  cached_input: number;
}

/** One run of a tree (GET /v1/runs/:id/tree). */
export interface RunTreeNode {
  run_id: string;
  /** The run that started it (null for the tree's top), and the step of that run that did. */
  parent_run_id: string | null;
  started_by_job: string | null;
  agent: string;
  /** Depth below the tree's top (0 for the run asked about). */
  depth: number;
  /** As the run's own view shows it (shownStatus): waiting_input while a question holds it up. */
  status: ShownStatus;
  error_code: string | null;
  input_line: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  iterations: number;
  tokens: TreeTokens;
  cost_usd: number;
  /** Its usage with that of every run below it in the tree as read. */
  total: { tokens: TreeTokens; cost_usd: number };
  contract: { contract: string; valid: boolean } | null;
  /** The run it continues (a retry or a fork, decision 0022), and the run that retried it. */
  origin: { kind: 'retry' | 'fork'; run_id: string; session_id: string; at_iteration: number | null } | null;
  retried_by: string | null;
  children: number;
}

/**
 * A run and the runs below it, depth first (each run before its children, children oldest first), from their
 * records; `childrenOf` lists a run's children, `pendingOf` counts a run's own pending questions. Each run's
 * status is shown as its own view shows it (a root run waits for input while any run of its tree does), its
 * duration is counted to `nowMs` while it is not finished, and its total sums the runs below it.
 */
export function buildRunTree(
  root: RunRecord,
  childrenOf: (runId: string) => readonly RunRecord[],
  pendingOf: (runId: string) => number,
  nowMs: number,
): RunTreeNode[] {
  const nodes: RunTreeNode[] = [];
  const visit = (run: RunRecord, depth: number): { total: RunTreeNode['total']; pending: number } => {
    const children = childrenOf(run.id);
    const tokens: TreeTokens = {
      input: run.usage.input_tokens,
      output: run.usage.output_tokens,
      cached_input: run.usage.cached_input_tokens,
    };
    const node: RunTreeNode = {
      run_id: run.id,
      parent_run_id: depth === 0 ? null : (run.parent?.run_id ?? null),
      started_by_job: depth === 0 ? null : (run.parent?.job_id ?? null),
      agent: run.agent,
      depth,
      status: run.status,
      error_code: run.error?.code ?? null,
      input_line: run.input_line,
      created_at: run.created_at,
      started_at: run.started_at,
      finished_at: run.finished_at,
      duration_ms: runDurationMs(run, nowMs),
      iterations: run.iteration,
      tokens,
      cost_usd: run.cost_usd,
      total: { tokens: { ...tokens }, cost_usd: run.cost_usd },
      contract: run.contract ? { contract: run.contract.contract, valid: run.contract.valid } : null,
      origin: continuedFrom(run),
      retried_by: run.retried_by,
      children: children.length,
    };
    nodes.push(node);
    let pendingBelow = 0;
    for (const child of children) {
      const below = visit(child, depth + 1);
      node.total.tokens.input += below.total.tokens.input;
      node.total.tokens.output += below.total.tokens.output;
      node.total.tokens.cached_input += below.total.tokens.cached_input;
      node.total.cost_usd += below.total.cost_usd;
      pendingBelow += below.pending;
    }
    const own = pendingOf(run.id);
    // A root run is held up by any question of its tree, as GET /v1/runs/:id and the run index say.
    node.status = shownStatus(run.status, run.parent === null ? own + pendingBelow : own);
    return { total: node.total, pending: own + pendingBelow };
  };
  visit(root, 0);
  return nodes;
}

/** The run a run continues, as a timeline shows it (a schedule's run continues none). */
function continuedFrom(run: RunRecord) {
  const origin = continuationOf(run);
  return origin
    ? {
        kind: origin.kind,
        run_id: origin.run_id,
        session_id: origin.session_id,
        at_iteration: origin.at_iteration,
      }
    : null;
}
