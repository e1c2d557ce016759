import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import {
  attemptViews,
  buildRunTimeline,
  buildRunTree,
  cutText,
  type IterationRecords,
} from '../../src/workflows/core/run-timeline.js';
import type { QuestionRecord } from '../../src/workflows/question-record.js';
import { type RunRecord, runRecordSchema } from '../../src/workflows/run-record.js';

const t = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return runRecordSchema.parse({
    v: 1,
    id: 'run_aaaaaaaaaaaaaaaa_bbbbbbbbbb',
    session_id: 'ses_aaaaaaaaaaaaaaaa',
    agent: 'agent',
    chat_id: 'main',
    status: 'completed',
    iteration: 2,
    usage: { input_tokens: 30, output_tokens: 7, cached_input_tokens: 4, requests: 2 },
    cost_usd: 0.5,
    retry_waste: { calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    budget: null,
    budget_raises: 0,
    result: 'done',
    error: null,
    created_at: t(0),
    updated_at: t(9),
    started_at: t(1),
    finished_at: t(9),
    ...overrides,
  });
}

function reply(iteration: number, parts: Message['parts'], at: string): Message {
  return {
    id: `r-${iteration}`,
    sender: 'agent',
    role: 'assistant',
    parts,
    metadata: {
      iteration,
      usage: { input_tokens: 10, output_tokens: 3, cached_input_tokens: 2, requests: 1 },
      cost_usd: 0.25,
    },
    created_at: at,
  };
}

function question(overrides: Partial<QuestionRecord>): QuestionRecord {
  return {
    v: 1,
    id: 'q',
    session_id: 'ses_aaaaaaaaaaaaaaaa',
    run_id: 'run_aaaaaaaaaaaaaaaa_bbbbbbbbbb',
    agent: 'agent',
    kind: 'ask_user',
    question: 'why?',
    options: [],
    tool: null,
    status: 'answered',
    answer: 'because',
    answered_by: 'user',
    timeout_at: null,
    default_answer: null,
    job_id: 'job',
    created_at: t(3),
    answered_at: t(5),
    ...overrides,
  };
}

const firstIteration: IterationRecords = {
  iteration: 1,
  jobId: 'run-i1',
  reply: {
    v: 2,
    index: 1,
    tool_calls: [{ id: 'call-1', name: 'charge_card' }],
    decision: 'tools',
    model: { provider: 'anthropic', model: 'claude' },
    context: { tokens: 12, sent_estimate: 11, input_tokens: 10, applied: ['compaction'], summary_up_to: 1 },
  },
  replyMessage: reply(
    1,
    [
      { type: 'text', text: 'charging' },
      { type: 'tool_call', id: 'call-1', name: 'charge_card', arguments: '{"amount":5}' },
    ],
    t(2),
  ),
  feedback: undefined,
  modelCalls: 2,
  summaryCalls: 1,
  compactedUpTo: 1,
  questions: [],
  children: [],
  attempts: {
    v: 1,
    count: 3,
    attempts: [
      { worker: 'w-a', at: t(1), attempt: 1, started: 1, cause: 'first' },
      { worker: 'w-b', at: t(1.5), attempt: 1, started: 2, cause: 'takeover' },
      { worker: 'w-b', at: t(1.7), attempt: 2, started: 3, cause: 'retry' },
    ],
  },
  failed: [{ attempt: 1, at: t(1.6), code: 'model_unavailable' }],
  tools: [
    {
      index: 0,
      jobId: 'run-i1-t0',
      call: { id: 'call-1', name: 'charge_card', arguments: `{"amount":5,"note":"${'x'.repeat(50)}"}` },
      intent: { v: 1, token: 'tok', idempotency_key: 'k', at: t(6) },
      outcome: { v: 1, is_error: false, interrupted: 'outcome_unknown', at: t(7) },
      result: {
        id: 'res',
        sender: 'tool',
        role: 'tool',
        parts: [{ type: 'tool_result', tool_call_id: 'call-1', content: 'ok'.repeat(40), is_error: false }],
        metadata: {},
        created_at: t(7),
      },
      questions: [
        question({
          id: 'q-approval',
          kind: 'approval',
          answer: { decision: 'approve' },
          created_at: t(3),
          answered_at: t(5),
        }),
      ],
      children: [],
      attempts: {
        v: 1,
        count: 2,
        attempts: [
          {
            worker: 'w-b',
            at: t(2.5),
            attempt: 1,
            started: 1,
            cause: 'first',
            parked_at: t(3),
            wake_at: t(60),
          },
          { worker: 'w-c', at: t(5.5), attempt: 1, started: 2, cause: 'wake' },
        ],
      },
      failed: [],
    },
  ],
};

describe('buildRunTimeline', () => {
  const timeline = buildRunTimeline({
    run: run({
      contract: { contract: 'c', valid: true, errors: [], warnings: [], schema_version: null },
    }),
    iterations: [
      firstIteration,
      {
        iteration: 2,
        jobId: 'run-i2',
        reply: { v: 2, index: 3, tool_calls: [], decision: 'final' },
        replyMessage: reply(2, [{ type: 'text', text: 'done' }], t(9)),
        feedback: undefined,
        modelCalls: 1,
        summaryCalls: 0,
        compactedUpTo: undefined,
        questions: [],
        children: [],
        tools: [],
        attempts: {
          v: 1,
          count: 2,
          attempts: [
            { worker: 'w-c', at: t(8), attempt: 1, started: 1, cause: 'first', parked_at: t(8.2) },
            { worker: 'w-c', at: t(8.7), attempt: 1, started: 2, cause: 'wake' },
          ],
        },
        failed: [],
      },
    ],
    nextFrom: null,
    cutAt: 20,
  });
  const [first, second] = timeline.steps;

  it('shows each execution of an iteration: who ran it, and why it ran again (a retry names its error)', () => {
    expect(first?.attempts.map((attempt) => [attempt.worker, attempt.cause, attempt.retry_of])).toEqual([
      ['w-a', 'first', null],
      ['w-b', 'takeover', null],
      ['w-b', 'retry', 'model_unavailable'],
    ]);
    expect(first?.attempts_total).toBe(3);
  });

  it('gives the model, tokens (estimate and provider counts), cost, effects and compaction of an iteration', () => {
    expect(first).toMatchObject({
      provider: 'anthropic',
      model: 'claude',
      decision: 'tools',
      tokens: { planned: 12, sent_estimate: 11, input: 10, output: 3, cached_input: 2 },
      cost_usd: 0.25,
      model_calls: 2,
      summary_calls: 1,
      effects_applied: ['compaction'],
      compaction: { up_to: 1 },
      started_at: t(1),
      finished_at: t(2),
      duration_ms: 1000,
    });
  });

  it('cuts arguments and results and gives their full size, the ledger, the approval and its wait', () => {
    const [call] = first?.tool_calls ?? [];
    expect(call?.arguments).toEqual({ text: '{"amount":5,"note":"', chars: 72, cut: true });
    expect(call?.result).toEqual({ text: 'okokokokokokokokokok', chars: 80, cut: true });
    expect(call?.ledger).toBe('outcome_unknown');
    expect(call?.duration_ms).toBe(1000);
    expect(call?.approval).toEqual({
      status: 'answered',
      decision: 'approve',
      asked_at: t(3),
      answered_at: t(5),
    });
    // The park is the approval's wait: listed once, as the approval.
    expect(call?.waits).toEqual([
      {
        kind: 'approval',
        id: 'q-approval',
        started_at: t(3),
        ended_at: t(5),
        duration_ms: 2000,
        status: 'answered',
      },
    ]);
  });

  it('lists a park no question or child run explains as a rate-limit wait, until the next execution', () => {
    expect(second?.waits).toEqual([
      { kind: 'rate_limit', id: null, started_at: t(8.2), ended_at: t(8.7), duration_ms: 500, status: null },
    ]);
  });

  it("gives the contract's verdict on the final iteration only", () => {
    expect(first?.verdict.contract).toBeNull();
    expect(second?.verdict.contract).toEqual({
      contract: 'c',
      valid: true,
      errors: [],
      warnings: [],
      schema_version: null,
    });
  });
});

describe('attemptViews', () => {
  it('numbers the executions kept after older ones were dropped', () => {
    const views = attemptViews({
      jobId: 'j',
      attempts: {
        v: 1,
        count: 10,
        attempts: [{ worker: 'w', at: t(1), attempt: 1, started: 10, cause: 'takeover' }],
      },
      failed: [],
    });
    expect(views.map((view) => view.execution)).toEqual([10]);
  });
});

describe('cutText', () => {
  it('keeps short text whole', () => {
    expect(cutText('abc', 3)).toEqual({ text: 'abc', chars: 3, cut: false });
  });
});

describe('buildRunTree', () => {
  it('lists a run, then each child depth first, oldest first, with its place in the tree', () => {
    const root = run({ id: 'run_aaaaaaaaaaaaaaaa_root000000' });
    const child = (id: string, parent: string, at: number, depth: number) =>
      run({
        id,
        parent: { run_id: parent, job_id: `${parent}-i1-t0`, depth },
        created_at: t(at),
        status: 'failed',
        error: { code: 'budget_exceeded', message: 'spent' },
      });
    const late = child('run_aaaaaaaaaaaaaaaa_late000000', root.id, 5, 1);
    const early = child('run_aaaaaaaaaaaaaaaa_early00000', root.id, 2, 1);
    const grandchild = child('run_aaaaaaaaaaaaaaaa_grand00000', early.id, 3, 2);
    const children: Record<string, RunRecord[]> = { [root.id]: [early, late], [early.id]: [grandchild] };
    const nodes = buildRunTree(
      root,
      (id) => children[id] ?? [],
      () => 0,
      Date.parse(t(60)),
    );
    expect(nodes.map((node) => [node.run_id, node.parent_run_id, node.depth, node.children])).toEqual([
      [root.id, null, 0, 2],
      [early.id, root.id, 1, 1],
      [grandchild.id, early.id, 2, 0],
      [late.id, root.id, 1, 0],
    ]);
    expect(nodes[1]).toMatchObject({
      status: 'failed',
      error_code: 'budget_exceeded',
      started_by_job: `${root.id}-i1-t0`,
    });
  });

  it("sums each run's usage with the runs below it, and shows a waiting root and asker as waiting for input", () => {
    // A team run (no model calls of its own) whose member delegated to a run that asks the user.
    const usage = (input: number, output: number) => ({
      input_tokens: input,
      output_tokens: output,
      cached_input_tokens: 1,
      requests: 1,
    });
    const team = run({
      id: 'run_aaaaaaaaaaaaaaaa_team000000',
      status: 'running',
      usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, requests: 0 },
      cost_usd: 0,
      created_at: t(0),
      finished_at: null,
    });
    const member = run({
      id: 'run_aaaaaaaaaaaaaaaa_member0000',
      status: 'running',
      parent: { run_id: team.id, job_id: `${team.id}-turn1`, depth: 1 },
      root_run_id: team.id,
      usage: usage(100, 10),
      cost_usd: 0.25,
      created_at: t(1),
      finished_at: null,
    });
    const asker = run({
      id: 'run_aaaaaaaaaaaaaaaa_asker00000',
      status: 'running',
      parent: { run_id: member.id, job_id: `${member.id}-i1-t0`, depth: 2 },
      root_run_id: team.id,
      usage: usage(40, 4),
      cost_usd: 0.125,
      created_at: t(2),
      finished_at: null,
    });
    const done = run({
      id: 'run_aaaaaaaaaaaaaaaa_done000000',
      status: 'completed',
      parent: { run_id: team.id, job_id: `${team.id}-turn2`, depth: 1 },
      root_run_id: team.id,
      usage: usage(7, 3),
      cost_usd: 0.5,
      created_at: t(3),
      finished_at: t(13),
    });
    const children: Record<string, RunRecord[]> = { [team.id]: [member, done], [member.id]: [asker] };
    const nodes = buildRunTree(
      team,
      (id) => children[id] ?? [],
      (id) => (id === asker.id ? 1 : 0),
      Date.parse(t(30)),
    );
    const byId = new Map(nodes.map((node) => [node.run_id, node]));
    expect(byId.get(team.id)).toMatchObject({
      // The root waits on its tree's question, like GET /v1/runs/:id; the member between them runs on.
      status: 'waiting_input',
      tokens: { input: 0, output: 0, cached_input: 0 },
      total: { tokens: { input: 147, output: 17, cached_input: 3 }, cost_usd: 0.875 },
      duration_ms: 30_000,
    });
    expect(byId.get(member.id)).toMatchObject({
      status: 'running',
      total: { tokens: { input: 140, output: 14, cached_input: 2 }, cost_usd: 0.375 },
    });
    expect(byId.get(asker.id)).toMatchObject({ status: 'waiting_input', total: { cost_usd: 0.125 } });
    // Finished: from its creation to its end, whatever the time now.
    expect(byId.get(done.id)).toMatchObject({ status: 'completed', duration_ms: 10_000 });
  });
});
