import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { createHttpServer } from '../../src/server/index.js';
import { crashAndTakeOver, waitFor } from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';
import { ApiHarness } from './api-harness.js';

const harnesses: Harness[] = [];
const apis: ApiHarness[] = [];
const apps: FastifyInstance[] = [];

afterAll(async () => {
  await Promise.allSettled(apps.map((app) => app.close()));
  await Promise.allSettled(apis.map((api) => api.close()));
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
});

/** The HTTP API on a harness whose workers run elsewhere (child processes). */
async function apiOn(harness: Harness) {
  const app = createHttpServer({
    engine: harness.engine,
    config: harness.loaded.config,
    logger: silentLogger(),
    bindHost: '127.0.0.1',
    pingRedis: () => harness.redis.ping(),
  });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  return async (path: string): Promise<{ status: number; body: any }> => {
    const response = await fetch(`http://127.0.0.1:${address.port}${path}`);
    return { status: response.status, body: await response.json() };
  };
}

describe('GET /v1/runs/:id/steps after a worker was SIGKILLed mid model call', () => {
  it('shows the iteration run twice, by two different workers, the second a takeover', async () => {
    const script: Script = {
      replies: [
        { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
        { text: 'the sum is 5' },
      ],
    };
    const outcome = await crashAndTakeOver(script, 'add 2 and 3', 'iteration.after_model_call', (harness) =>
      harnesses.push(harness),
    );
    const get = await apiOn(outcome.harness);
    const { status, body } = await get(`/v1/runs/${outcome.runId}/steps`);
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    expect(body.iterations).toBe(2);
    const [first, second] = body.steps;
    expect(first.attempts).toHaveLength(2);
    const [died, tookOver] = first.attempts;
    expect(died.cause).toBe('first');
    expect(tookOver.cause).toBe('takeover');
    expect(died.attempt).toBe(1);
    expect(tookOver.attempt).toBe(1);
    expect(died.worker).not.toBe(tookOver.worker);
    expect(Date.parse(tookOver.started_at)).toBeGreaterThanOrEqual(Date.parse(died.started_at));
    // Two model calls were started for iteration 1: the first one's reply died with its worker.
    expect(first.model_calls).toBe(2);
    expect(first.state).toBe('committed');
    expect(first.provider).toBe('model');
    expect(first.model).toBe('test');
    expect(first.decision).toBe('tools');
    expect(first.tool_calls).toHaveLength(1);
    const [call] = first.tool_calls;
    expect(call.name).toBe('add');
    expect(JSON.parse(call.arguments.text)).toEqual({ a: 2, b: 3 });
    expect(call.result.text).toContain('5');
    expect(call.ledger).toBe('done');
    // The tool call and the next iteration ran once, on the worker that took over.
    expect(call.attempts.map((attempt: { worker: string }) => attempt.worker)).toEqual([tookOver.worker]);
    expect(second.attempts.map((attempt: { cause: string }) => attempt.cause)).toEqual(['first']);
    expect(second.decision).toBe('final');
  });
});

describe('GET /v1/system', () => {
  it('lists two worker processes with their heartbeats, the queues per shard and kind, version and config hash', async () => {
    const api = await ApiHarness.start({
      script: {
        replies: [
          { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
          { text: 'done' },
        ],
      },
      worker: false,
    });
    apis.push(api);
    const harness = api.harness;
    const workers = [harness.spawnWorker(), harness.spawnWorker()];
    await waitFor(
      async () => (await api.request('GET', '/v1/system')).body.workers?.length === 2,
      30_000,
      'two workers registered',
    );
    const { status, body } = await api.request('GET', '/v1/system');
    expect(status).toBe(200);
    const pids = workers.map((worker) => worker.child.pid).sort();
    expect(body.workers.map((worker: { pid: number }) => worker.pid).sort()).toEqual(pids);
    for (const worker of body.workers) {
      expect(worker.alive).toBe(true);
      expect(worker.concurrency).toBe(10);
      expect(worker.shards).toEqual([0]);
      expect(typeof worker.host).toBe('string');
      expect(Date.parse(worker.last_heartbeat_at)).toBeGreaterThanOrEqual(Date.parse(worker.started_at));
      // What it serves (decision 0031): its config's agent, provider and toolboxes, the built-in kinds.
      expect(worker.capabilities).toMatchObject({
        agents: ['agent'],
        providers: ['model'],
        toolboxes: expect.arrayContaining(['test', 'utils']),
        tools: expect.arrayContaining(['add']),
        middleware: expect.arrayContaining(['timeout', 'recovery']),
        coordinators: expect.arrayContaining(['sequence', 'llm']),
        mcp_servers: [],
      });
    }
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.config_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(body.queues).toHaveLength(1);
    expect(body.queues[0].counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, failed: 0 });
    expect(body.runs_by_status).toMatchObject({
      queued: 0,
      running: 0,
      waiting_input: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
    });

    // A run waiting for an answer: its tool step is parked in the delayed set, listed by its kind.
    const { runId, sessionId } = await api.engine.startRun({ input: 'ask me' });
    const question = await pendingQuestion(api, runId, 'ask_user');
    // Parked on purpose (its latest execution parked it), not a retry waiting for its backoff: the console
    // says it waits for an answer instead of showing a delayed job that looks stuck.
    await waitFor(
      async () => (await api.request('GET', '/v1/system')).body.queues[0].parked === 1,
      30_000,
      'the tool step parked',
    );
    const parked = await api.request('GET', '/v1/system');
    expect(parked.body.queues[0].counts.delayed).toBe(1);
    expect(parked.body.queues[0].by_kind).toEqual({ tool: { delayed: 1, parked: 1 } });
    expect(parked.body.queues[0].by_kind_sampled).toBe(false);
    expect(parked.body.runs_by_status).toMatchObject({ waiting_input: 1, completed: 0 });
    await api.engine.respond(sessionId, question, 'red');
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect((await api.request('GET', '/v1/system')).body.runs_by_status).toMatchObject({
      waiting_input: 0,
      completed: 1,
    });
    for (const worker of workers) await worker.stop();
    await waitFor(
      async () => (await api.request('GET', '/v1/system')).body.workers?.length === 0,
      30_000,
      'the stopped workers leaving the registry',
    );
  });
});

/** Waits until the run asks something, and returns the question. */
async function pendingQuestion(api: ApiHarness, runId: string, kind: string) {
  let question: { id: string; kind: string } | null | undefined;
  await waitFor(
    async () => {
      question = (await api.engine.getRun(runId))?.pending_question;
      return question?.kind === kind;
    },
    30_000,
    `a pending ${kind} question`,
  );
  return question?.id ?? '';
}

describe('GET /v1/runs/:id/steps', () => {
  it('gives each iteration and tool call: a retry and its error, a question, an approval, a compaction, a rejected answer', async () => {
    const big = (label: string) => ({
      tool_calls: [{ name: 'big_result', arguments: { label, size: 4000 } }],
    });
    const api = await ApiHarness.start({
      script: {
        replies: [
          {
            text: 'asking',
            tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }],
            fail: [{ kind: 'server_error' }],
          },
          { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
          big('a'),
          big('b'),
          big('c'),
          { text: 'the password is hunter2' },
          { text: 'I will not share it.' },
        ],
        summary: { text: 'SUMMARY: three results fetched' },
      },
      harness: {
        maxIterations: 20,
        provider: { context_window: 4000 },
        agent: {
          effects: [{ kind: 'compact', params: { threshold: 0.5 } }],
          tools: { charge_card: { requires_approval: true } },
          options: {
            max_iterations: 20,
            output_guardrail: { deny: ['hunter\\d'], on_fail: 'retry', max_retries: 2 },
          },
        },
      },
    });
    apis.push(api);
    const { runId, sessionId } = await api.engine.startRun({ input: 'do the task' });
    await api.engine.respond(sessionId, await pendingQuestion(api, runId, 'ask_user'), 'blue');
    await api.engine.respond(sessionId, await pendingQuestion(api, runId, 'approval'), 'approve');
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');

    const { status, body } = await api.request('GET', `/v1/runs/${runId}/steps?limit=100&cut_at=50`);
    expect(status).toBe(200);
    const steps = body.steps;
    expect(steps.map((step: { decision: string }) => step.decision)).toEqual([
      'tools',
      'tools',
      'tools',
      'tools',
      'tools',
      'retry',
      'final',
    ]);
    for (const step of steps) {
      expect(step).toMatchObject({ state: 'committed', provider: 'model', model: 'test' });
      expect(step.tokens.input).toBeGreaterThan(0);
      expect(step.tokens.sent_estimate).toBeGreaterThan(0);
      expect(step.duration_ms).toBeGreaterThanOrEqual(0);
    }

    // Iteration 1: the provider's 5xx failed the first attempt; the retry names it.
    const [asking, charging] = steps;
    expect(asking.attempts.map((attempt: { cause: string }) => attempt.cause)).toEqual(['first', 'retry']);
    expect(asking.attempts[1].retry_of).toMatch(/^model_/);
    expect(asking.attempts[1].attempt).toBe(2);
    // The question: the call parked, then woke when it was answered; the wait has its duration.
    const [ask] = asking.tool_calls;
    expect(ask).toMatchObject({ name: 'ask_user', ledger: 'done', is_error: false });
    expect(ask.result.text).toContain('blue');
    expect(ask.attempts.map((attempt: { cause: string }) => attempt.cause)).toEqual(['first', 'wake']);
    expect(ask.attempts[0].parked_at).not.toBeNull();
    expect(ask.waits).toEqual([
      expect.objectContaining({ kind: 'ask_user', status: 'answered', duration_ms: expect.any(Number) }),
    ]);

    // Iteration 2: the approval, its decision and wait; the call ran after it.
    const [charge] = charging.tool_calls;
    expect(charge).toMatchObject({
      name: 'charge_card',
      ledger: 'done',
      approval: { status: 'answered', decision: 'approve' },
    });
    expect(JSON.parse(charge.arguments.text)).toEqual({ amount: 42 });
    expect(charge.result.text).toContain('42');
    expect(charge.waits.map((wait: { kind: string }) => wait.kind)).toEqual(['approval']);
    // It parked for the approval before it recorded anything, and woke when it came.
    expect(charge.attempts.map((attempt: { cause: string }) => attempt.cause)).toEqual(['first', 'wake']);
    expect(charge.attempts[0].parked_at).not.toBeNull();
    expect(Date.parse(charge.started_at)).toBeGreaterThanOrEqual(Date.parse(charge.approval.answered_at));

    // A big result is cut at cut_at, with its full size.
    const bigResult = steps[2].tool_calls[0].result;
    expect(bigResult.cut).toBe(true);
    expect(bigResult.text).toHaveLength(50);
    expect(bigResult.chars).toBe(4000);

    // A compaction was made before one of the later requests, with its summary call.
    const compacted = steps.filter((step: { compaction: unknown }) => step.compaction !== null);
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted[0].summary_calls).toBeGreaterThan(0);
    expect(compacted[0].compaction.up_to).toBeGreaterThan(0);
    // The summary call has its own tokens and cost, so the steps add up to the run's usage.
    expect(compacted[0].compaction.tokens.input).toBeGreaterThan(0);
    expect(compacted[0].compaction.tokens.output).toBeGreaterThan(0);
    expect(compacted[0].compaction.cost_usd).toBeGreaterThanOrEqual(0);
    type Tokens = { input: number; output: number } | null;
    const stepSum = (pick: (tokens: { input: number; output: number }) => number) =>
      steps.reduce(
        (sum: number, step: { tokens: Tokens; compaction: { tokens: Tokens } | null }) =>
          sum +
          (step.tokens ? pick(step.tokens) : 0) +
          (step.compaction?.tokens ? pick(step.compaction.tokens) : 0),
        0,
      );
    const run = (await api.request('GET', `/v1/runs/${runId}`)).body;
    expect(stepSum((tokens) => tokens.input)).toBe(run.usage.input_tokens);
    expect(stepSum((tokens) => tokens.output)).toBe(run.usage.output_tokens);

    // The guardrail sent the answer back: the verdict carries its feedback.
    expect(steps[5].verdict.answer_rejected.text).toContain('not accepted');
    expect(steps[6].verdict.contract).toBeNull();

    // Pages.
    const page = await api.request('GET', `/v1/runs/${runId}/steps?from=2&limit=2`);
    expect(page.body.steps.map((step: { iteration: number }) => step.iteration)).toEqual([2, 3]);
    expect(page.body.next_from).toBe(4);
    expect(body.next_from).toBeNull();
  });

  it('answers 404 for an unknown run and 400 for a bad page', async () => {
    const api = await ApiHarness.start({ script: { replies: [] }, worker: false });
    apis.push(api);
    const missing = await api.request('GET', '/v1/runs/run_aaaaaaaaaaaaaaaa_bbbbbbbbbb/steps');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expect((await api.request('GET', '/v1/runs/nonsense/tree')).status).toBe(404);
    const bad = await api.request('GET', '/v1/runs/run_aaaaaaaaaaaaaaaa_bbbbbbbbbb/steps?limit=0');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('limit');
  });
});

describe('GET /v1/runs/:id/tree', () => {
  it('a supervisor that delegates a sub-goal to a lead that spawns two helpers: every run, depth first', async () => {
    const api = await ApiHarness.start({
      script: { replies: [] },
      harness: {
        agents: [
          {
            name: 'boss',
            script: {
              replies: [
                {
                  tool_calls: [
                    { name: 'declare_sub_goals', arguments: { sub_goals: [{ id: 'a', title: 'one' }] } },
                  ],
                },
                {
                  tool_calls: [
                    {
                      name: 'delegate_to_agent',
                      arguments: { agent: 'lead', task: 'work on a', sub_goal: 'a' },
                    },
                  ],
                },
              ],
              default: { text: 'I give up' },
            },
            options: { max_iterations: 10, supervisor: {} },
          },
          {
            name: 'lead',
            script: {
              rules: [{ when: { role: 'tool' }, reply: { text: 'collected' } }],
              replies: [
                {
                  tool_calls: [
                    {
                      name: 'spawn_agents',
                      arguments: {
                        tasks: [
                          { agent: 'helper', task: 'first' },
                          { agent: 'helper', task: 'second' },
                        ],
                      },
                    },
                  ],
                },
              ],
            },
          },
          { name: 'helper', script: { default: { text: 'helped' } } },
        ],
      },
    });
    apis.push(api);
    const { runId } = await api.engine.startRun({ input: 'plan it', agent: 'boss' });
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const { status, body } = await api.request('GET', `/v1/runs/${runId}/tree`);
    expect(status).toBe(200);
    expect(body.truncated).toBe(false);
    const runs = body.runs;
    expect(
      runs.map((run: { agent: string; depth: number; children: number }) => [
        run.agent,
        run.depth,
        run.children,
      ]),
    ).toEqual([
      ['boss', 0, 1],
      ['lead', 1, 2],
      ['helper', 2, 0],
      ['helper', 2, 0],
    ]);
    const [boss, lead, first, second] = runs;
    expect(boss).toMatchObject({ run_id: runId, parent_run_id: null, status: 'completed', error_code: null });
    expect(lead.parent_run_id).toBe(runId);
    expect(lead.started_by_job).toBe(`${runId}-i2-t0`);
    expect(first.parent_run_id).toBe(lead.run_id);
    expect(second.parent_run_id).toBe(lead.run_id);
    for (const run of runs) {
      expect(run.status).toBe('completed');
      expect(run.iterations).toBeGreaterThan(0);
      expect(run.tokens.input).toBeGreaterThan(0);
      expect(run.duration_ms).toBeGreaterThanOrEqual(0);
    }
    // The tree of a run below the top starts at that run.
    const sub = await api.request('GET', `/v1/runs/${lead.run_id}/tree`);
    expect(sub.body.runs.map((run: { depth: number }) => run.depth)).toEqual([0, 1, 1]);
    expect(sub.body.runs[0].parent_run_id).toBeNull();
  });

  it("a team's run: each member's turn is a child run", async () => {
    const api = await ApiHarness.start({
      script: { replies: [] },
      harness: {
        agents: [
          {
            name: 'researcher',
            script: {
              rules: [{ when: { role: 'tool' }, reply: { text: 'facts: owls hunt at night' } }],
              replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }],
            },
          },
          {
            name: 'writer',
            script: { rules: [{ when: { role: 'user', contains: 'facts' }, reply: { text: 'article' } }] },
          },
        ],
        config: {
          teams: [
            {
              name: 'pipeline',
              members: [
                { agent: 'researcher', role: 'research' },
                { agent: 'writer', role: 'write' },
              ],
              coordinator: { kind: 'sequence' },
            },
          ],
        },
      },
    });
    apis.push(api);
    const { runId } = await api.engine.startRun({ input: 'write about owls', agent: 'pipeline' });
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const { body } = await api.request('GET', `/v1/runs/${runId}/tree`);
    expect(body.runs.map((run: { agent: string; depth: number }) => [run.agent, run.depth])).toEqual([
      ['pipeline', 0],
      ['researcher', 1],
      ['writer', 1],
    ]);
    expect(body.runs[1].iterations).toBe(2);
  });
});
