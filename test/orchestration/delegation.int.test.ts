import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import { runKeys } from '../../src/redis/keys.js';
import { Harness, type HarnessAgent, type HarnessOptions } from '../helpers/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(agents: HarnessAgent[], options: Partial<HarnessOptions> = {}) {
  harness = new Harness({ agents, ...options });
  await harness.startWorker();
  return harness;
}

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, arguments: args }] });

/** The child runs of a run, read from Redis (the parent's set of children). */
async function childrenOf(h: Harness, sessionId: string, runId: string) {
  const ids = await h.redis.smembers(runKeys(h.engine.space, sessionId, runId).children);
  const runs = await Promise.all(ids.map((id) => h.engine.getRun(id)));
  return runs.flatMap((run) => (run ? [run] : []));
}

function toolResults(events: RatchetEvent[], runId: string) {
  return events.flatMap((event) =>
    event.kind === 'tool_call_end' && event.run_id === runId
      ? [{ name: event.data.name, is_error: event.data.is_error, content: event.data.content }]
      : [],
  );
}

describe('delegation', () => {
  it('runs a delegated task as a child run on its own chat and returns its answer to the parent', async () => {
    const h = await start([
      {
        name: 'lead',
        prefix: '🧭',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'the researcher says: 42' } }],
          replies: [call('delegate_to_agent', { agent: 'researcher', task: 'find the answer' })],
        },
      },
      {
        name: 'researcher',
        prefix: '🔎',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'the answer is 42' } }],
          replies: [call('add', { a: 40, b: 2 })],
        },
      },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'what is the answer?' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('the researcher says: 42');

    const [child, ...others] = await childrenOf(h, sessionId, runId);
    expect(others).toEqual([]);
    expect(child).toMatchObject({
      agent: 'researcher',
      status: 'completed',
      result: 'the answer is 42',
      chat_id: child?.id,
      parent: { run_id: runId, depth: 1 },
      lineage: ['lead'],
    });
    // The child's chat holds its task and its own work; the parent's chat only the final answer.
    const childChat = await h.engine.readChat(sessionId, { chatId: child?.id ?? '' });
    expect(childChat.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(childChat[0]?.parts).toEqual([{ type: 'text', text: 'find the answer' }]);
    const parentChat = await h.transcript(sessionId);
    expect(parentChat[2]?.parts[0]).toMatchObject({ type: 'tool_result', content: 'the answer is 42' });

    const events = await h.events(sessionId);
    const tree = events.filter((event) => event.kind === 'agent_start' || event.kind === 'agent_end');
    expect(tree.map((event) => [event.kind, event.agent, event.data])).toEqual([
      ['agent_start', 'lead', { parent_run_id: null, depth: 0, prefix: '🧭' }],
      ['agent_start', 'researcher', { parent_run_id: runId, depth: 1, prefix: '🔎' }],
      [
        'agent_end',
        'researcher',
        {
          status: 'completed',
          parent_run_id: runId,
          depth: 1,
          prefix: '🔎',
          duration_ms: expect.any(Number),
          // The child's result metadata: its iterations, tool calls, tokens and cost.
          metadata: {
            execution_time_ms: expect.any(Number),
            iterations: 2,
            tool_calls: { count: 1, names: ['add'] },
            tokens: { input: expect.any(Number), output: expect.any(Number), total: expect.any(Number) },
            cost_usd: 0,
            confidence: null,
            partial: null,
            contract: null,
            partial_results: {},
            schema_version: null,
          },
        },
      ],
      [
        'agent_end',
        'lead',
        {
          status: 'completed',
          parent_run_id: null,
          depth: 0,
          prefix: '🧭',
          duration_ms: expect.any(Number),
          metadata: expect.objectContaining({ tool_calls: { count: 1, names: ['delegate_to_agent'] } }),
        },
      ],
    ]);
    // A run's duration covers its children's.
    const ends = tree.filter((event) => event.kind === 'agent_end');
    const [childEnd, leadEnd] = ends.map((event) =>
      event.kind === 'agent_end' ? (event.data.duration_ms ?? -1) : -1,
    );
    expect(leadEnd).toBeGreaterThanOrEqual(childEnd ?? 0);
    // Each run's terminal event is its last one, the child's as well as the parent's.
    for (const id of [runId, child?.id ?? '']) {
      const ofRun = events.filter((event) => event.run_id === id).map((event) => event.kind);
      expect(ofRun.slice(-2)).toEqual(['agent_end', 'run_completed']);
    }
    // The child's tool events carry the child's run id.
    expect(toolResults(events, child?.id ?? '')).toEqual([
      { name: 'add', is_error: false, content: '{"sum":42}' },
    ]);
    expect(toolResults(events, runId).map((result) => result.name)).toEqual(['delegate_to_agent']);
  });

  it('lists the other agents with their descriptions', async () => {
    const h = await start([
      {
        name: 'lead',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'done' } }],
          replies: [call('list_agents', {})],
        },
      },
      { name: 'writer', description: 'writes prose', script: { default: { text: 'x' } } },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'who is there?' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(toolResults(await h.events(sessionId), runId)).toEqual([
      { name: 'list_agents', is_error: false, content: '[{"name":"writer","description":"writes prose"}]' },
    ]);
  });

  it('spawns several children and returns their answers in the order given', async () => {
    const h = await start([
      {
        name: 'lead',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'collected' } }],
          replies: [
            call('spawn_agents', {
              tasks: [
                { agent: 'slow', task: 'first' },
                { agent: 'fast', task: 'second' },
                { agent: 'slow', task: 'third' },
              ],
            }),
          ],
        },
      },
      {
        name: 'slow',
        script: {
          rules: [
            { when: { contains: 'first' }, reply: { text: 'one', delay_ms: 400 } },
            { when: { contains: 'third' }, reply: { text: 'three', delay_ms: 100 } },
          ],
        },
      },
      { name: 'fast', script: { default: { text: 'two' } } },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const [spawned] = toolResults(await h.events(sessionId), runId);
    expect(spawned).toMatchObject({ name: 'spawn_agents', is_error: false });
    const results = JSON.parse(spawned?.content ?? '[]') as {
      agent: string;
      answer: string;
      metadata: unknown;
    }[];
    expect(results.map(({ agent, answer }) => ({ agent, answer }))).toEqual([
      { agent: 'slow', answer: 'one' },
      { agent: 'fast', answer: 'two' },
      { agent: 'slow', answer: 'three' },
    ]);
    // Each answer comes with what its run cost: one iteration, no tool call, its tokens.
    for (const { metadata } of results) {
      expect(metadata).toMatchObject({ iterations: 1, tool_calls: { count: 0, names: [] }, cost_usd: 0 });
      expect((metadata as { tokens: { total: number } }).tokens.total).toBeGreaterThan(0);
    }
    expect((await childrenOf(h, sessionId, runId)).length).toBe(3);
  });

  it('cancels the other children when one fails, and reports which failed and why', async () => {
    const h = await start([
      {
        name: 'lead',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'one of them failed' } }],
          replies: [
            call('spawn_agents', {
              tasks: [
                { agent: 'sleeper', task: 'take your time' },
                { agent: 'broken', task: 'fail' },
              ],
            }),
          ],
        },
      },
      { name: 'sleeper', script: { default: { text: 'late', delay_ms: 10_000 } } },
      { name: 'broken', script: { default: { fail: [{ kind: 'auth', message: 'bad key' }] } } },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const [result] = toolResults(await h.events(sessionId), runId);
    expect(result?.is_error).toBe(true);
    expect(result?.content).toMatch(
      /task 1 \(sleeper, run run_\w+\): cancelled: cancelled because child run/,
    );
    expect(result?.content).toMatch(/task 2 \(broken, run run_\w+\): failed: .*bad key/);
    const children = await childrenOf(h, sessionId, runId);
    expect(children.map((child) => [child.agent, child.status]).sort()).toEqual([
      ['broken', 'failed'],
      ['sleeper', 'cancelled'],
    ]);
  });

  it('refuses delegating to itself, to an unknown agent and past max_delegation_depth', async () => {
    const h = await start(
      [
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool', contains: 'child says' }, reply: { text: 'end' } }],
            replies: [
              call('delegate_to_agent', { agent: 'lead', task: 'me again' }),
              call('delegate_to_agent', { agent: 'nobody', task: 'x' }),
              call('delegate_to_agent', { agent: 'middle', task: 'go deeper' }),
            ],
          },
        },
        {
          name: 'middle',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'child says: too deep' } }],
            replies: [call('delegate_to_agent', { agent: 'leaf', task: 'deepest' })],
          },
        },
        { name: 'leaf', script: { default: { text: 'leaf answer' } } },
      ],
      { config: { max_delegation_depth: 1 } },
    );
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const events = await h.events(sessionId);
    const results = toolResults(events, runId);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(results[0]?.content).toContain('cannot delegate to itself');
    expect(results[1]?.content).toContain(
      'unknown agent "nobody" (agents you can delegate to: middle, leaf)',
    );
    expect(results[2]).toEqual({
      name: 'delegate_to_agent',
      is_error: false,
      content: 'child says: too deep',
    });
    const [middle] = await childrenOf(h, sessionId, runId);
    const deeper = toolResults(events, middle?.id ?? '');
    expect(deeper[0]?.is_error).toBe(true);
    expect(deeper[0]?.content).toContain('max_delegation_depth is 1');
    expect(await childrenOf(h, sessionId, middle?.id ?? '')).toEqual([]);
  });

  it("an agent's own max_delegation_depth is below the global one", async () => {
    const h = await start(
      [
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'end' } }],
            replies: [call('delegate_to_agent', { agent: 'middle', task: 'go deeper' })],
          },
        },
        {
          name: 'middle',
          options: { max_delegation_depth: 1 },
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'child says: not allowed' } }],
            replies: [call('delegate_to_agent', { agent: 'leaf', task: 'deepest' })],
          },
        },
        { name: 'leaf', script: { default: { text: 'leaf answer' } } },
      ],
      { config: { max_delegation_depth: 5 } },
    );
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const [middle] = await childrenOf(h, sessionId, runId);
    const refused = toolResults(await h.events(sessionId), middle?.id ?? '');
    expect(refused[0]?.is_error).toBe(true);
    expect(refused[0]?.content).toContain('agent "middle" has max_delegation_depth 1');
    expect(await childrenOf(h, sessionId, middle?.id ?? '')).toEqual([]);
  });

  it("gives a child its own toolboxes first, then its parent's", async () => {
    const h = await start([
      {
        name: 'lead',
        toolboxes: ['test'],
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'ok' } }],
          replies: [call('delegate_to_agent', { agent: 'helper', task: 'add things' })],
        },
      },
      {
        name: 'helper',
        toolboxes: ['alt'],
        script: {
          rules: [{ when: { role: 'tool', contains: 'echoed' }, reply: { text: 'helper done' } }],
          replies: [call('add', { a: 1, b: 2 }), call('slow_echo', { text: 'echoed', delay_ms: 0 })],
        },
      },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const [child] = await childrenOf(h, sessionId, runId);
    // `add` comes from its own `alt` toolbox (which wins the clash), `slow_echo` from the parent's `test`.
    expect(toolResults(await h.events(sessionId), child?.id ?? '')).toEqual([
      { name: 'add', is_error: false, content: '{"sum":3,"by":"alt"}' },
      { name: 'slow_echo', is_error: false, content: 'echoed' },
    ]);
  });

  it('cancels the children with their parent, and holds no worker slot while the parent waits', async () => {
    const h = await start(
      [
        {
          name: 'lead',
          script: { replies: [call('delegate_to_agent', { agent: 'helper', task: 'wait for me' })] },
        },
        {
          name: 'helper',
          script: { replies: [call('slow_echo', { text: 'x', delay_ms: 30_000 })] },
        },
      ],
      // One slot: the child's steps can only run if the waiting parent does not hold it.
      { worker: { concurrency: 1 } },
    );
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    let child: Awaited<ReturnType<typeof childrenOf>>[number] | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      [child] = await childrenOf(h, sessionId, runId);
      if (child && child.iteration >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(child?.iteration).toBe(1);
    await h.engine.cancelRun(runId);
    const cancelled = await h.engine.waitForRun(child?.id ?? '', { timeoutMs: 10_000 });
    expect(cancelled.status).toBe('cancelled');
    const events = await h.events(sessionId);
    expect(
      events.find((event) => event.kind === 'run_cancelled' && event.run_id === child?.id)?.data,
    ).toEqual({ reason: `its parent run ${runId} was cancelled` });
  });

  it("shares the root run's budget with the whole tree: a child's spending counts against it", async () => {
    const h = await start([
      {
        name: 'lead',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'never reached' } }],
          replies: [
            {
              tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'big job' } }],
              usage: { input_tokens: 300, output_tokens: 0 },
            },
          ],
        },
      },
      {
        name: 'helper',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'never reached' } }],
          replies: [
            {
              tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
              usage: { input_tokens: 700, output_tokens: 0 },
            },
          ],
        },
      },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'go', budget: { tokens: 1000 } });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 20_000 });
    // 300 (lead) + 700 (helper) leave nothing for either's next request: the helper fails first, then the
    // lead, whose own usage alone (300) would still have fitted.
    const [child] = await childrenOf(h, sessionId, runId);
    expect(child).toMatchObject({ status: 'failed', budget: { tokens: 1000 }, root_run_id: runId });
    expect(child?.error?.code).toBe('budget_exceeded');
    expect(child?.error?.message).toMatch(/the run and the runs it delegated to have used 1000 tokens/);
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('budget_exceeded');
    expect(run.usage.input_tokens).toBe(300);
  });
});

describe('questions asked below the root', () => {
  it('shows the root run waiting for input while a delegated agent asks, and goes on when answered', async () => {
    const h = await start([
      {
        name: 'lead',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'the helper heard: blue' } }],
          replies: [
            { tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'ask' } }] },
          ],
        },
      },
      {
        name: 'helper',
        script: {
          rules: [{ when: { role: 'tool' }, reply: { text: 'blue' } }],
          replies: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] }],
        },
      },
    ]);
    const { runId, sessionId } = await h.engine.startRun({ input: 'go' });
    let waiting = await h.engine.getRun(runId);
    const deadline = Date.now() + 20_000;
    while (waiting?.status !== 'waiting_input' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      waiting = await h.engine.getRun(runId);
    }
    expect(waiting?.status).toBe('waiting_input');
    expect(waiting?.pending_question?.question).toBe('Which colour?');
    expect(waiting?.pending_question?.agent).toBe('helper');
    await h.engine.respond(sessionId, waiting?.pending_question?.id ?? '', 'blue');
    const run = await h.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('the helper heard: blue');
  });
});
