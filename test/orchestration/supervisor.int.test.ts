import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import { Harness, type HarnessAgent } from '../helpers/harness.js';

// A supervisor (agents[].options.supervisor) declares sub-goals, delegates them with `sub_goal`, and its run
// finishes on its own when all are completed. Each change is a progress event of the supervisor's run.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Call = { name: string; arguments: Record<string, unknown> };
const declare = (...goals: [string, string][]): Call => ({
  name: 'declare_sub_goals',
  arguments: { sub_goals: goals.map(([id, title]) => ({ id, title })) },
});
const delegate = (agent: string, goal: string): Call => ({
  name: 'delegate_to_agent',
  arguments: { agent, task: `work on ${goal}`, sub_goal: goal },
});

function boss(replies: Call[][], supervisor: Record<string, number> = {}): HarnessAgent {
  return {
    name: 'boss',
    script: { replies: replies.map((calls) => ({ tool_calls: calls })), default: { text: 'I give up' } },
    options: { max_iterations: 10, supervisor },
  };
}
const helper: HarnessAgent = { name: 'helper', script: { default: { text: 'helped' } } };
// Every attempt of its model call is refused (auth errors are not retried): its runs fail.
const broken: HarnessAgent = {
  name: 'broken',
  script: { default: { text: 'never', fail: [{ kind: 'auth' }, { kind: 'auth' }, { kind: 'auth' }] } },
};

async function progressOf(h: Harness, sessionId: string, runId: string) {
  return (await h.events(sessionId))
    .filter((event): event is Extract<RatchetEvent, { kind: 'progress' }> => event.kind === 'progress')
    .filter((event) => event.run_id === runId)
    .map((event) => ({
      fraction: event.data.fraction,
      goals: (event.data.sub_goals ?? []).map((goal) => `${goal.id}:${goal.status}`).join(' '),
      ...(event.data.warning ? { warning: event.data.warning } : {}),
    }));
}

function bossCalls(h: Harness) {
  return h.modelCalls().filter((call) => call.agent === 'boss');
}

describe('supervisor', () => {
  it('declares sub-goals, delegates them, and finishes on its own when all are completed', async () => {
    harness = new Harness({
      agents: [
        boss([
          [declare(['a', 'first part'], ['b', 'second part'])],
          [delegate('helper', 'a'), delegate('helper', 'b')],
        ]),
        helper,
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'do it all' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe(
      'All 2 sub-goals are completed.\n\n[✓] a: first part — helped\n[✓] b: second part — helped',
    );
    // Declaring and delegating took two model calls; finishing took none.
    expect(bossCalls(harness)).toHaveLength(2);
    expect(bossCalls(harness)[0]?.system).toContain('declare_sub_goals');
    expect(await progressOf(harness, sessionId, runId)).toEqual([
      { fraction: 0, goals: 'a:pending b:pending' },
      { fraction: 0, goals: 'a:in_progress b:in_progress' },
      { fraction: 1, goals: 'a:completed b:completed' },
    ]);
    const view = await harness.engine.getRun(runId);
    expect(view?.progress).toMatchObject({ fraction: 1, message: '2 of 2 sub-goals completed' });
    expect(view?.progress?.sub_goals?.map((goal) => goal.status)).toEqual(['completed', 'completed']);
    expect(view?.orchestration_steps).toBe(2);
    expect(view?.partial).toBeNull();
  });

  it('tells the supervisor a sub-goal failed; it re-plans, and the new plan completes', async () => {
    harness = new Harness({
      agents: [
        boss([
          [declare(['a', 'the hard way'])],
          [delegate('broken', 'a')],
          [declare(['b', 'the easy way'])],
          [delegate('helper', 'b')],
        ]),
        helper,
        broken,
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'do it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toContain('[✓] b: the easy way — helped');
    expect(await progressOf(harness, sessionId, runId)).toEqual([
      { fraction: 0, goals: 'a:pending' },
      { fraction: 0, goals: 'a:in_progress' },
      { fraction: 0, goals: 'a:failed' },
      // The re-plan replaces what was not completed.
      { fraction: 0, goals: 'b:pending' },
      { fraction: 0, goals: 'b:in_progress' },
      { fraction: 1, goals: 'b:completed' },
    ]);
    // The supervisor was told: the failed delegation's result says so before its next request.
    const third = bossCalls(harness)[2];
    expect(JSON.stringify(third?.messages)).toContain('Sub-goal \\"a\\" failed');
  });

  it('ends partial, with what it has, when the delegations would pass max_orchestration_steps', async () => {
    harness = new Harness({
      agents: [
        boss([[declare(['a', 'one'], ['b', 'two'])], [delegate('helper', 'a')], [delegate('helper', 'b')]], {
          max_orchestration_steps: 1,
        }),
        helper,
      ],
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'do both' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.partial?.reason).toContain('max_orchestration_steps (1) reached');
    expect(run.result).toContain('Stopped: max_orchestration_steps (1) reached');
    expect(run.result).toContain('[✓] a: one — helped');
    expect(run.result).toContain('[ ] b: two');
    // The second delegation never started.
    expect(harness.modelCalls().filter((call) => call.agent === 'helper')).toHaveLength(1);
    const view = await harness.engine.getRun(runId);
    expect(view?.orchestration_steps).toBe(1);
  });

  it('cuts sub-goals over max_sub_goals with a warning, and an answer with goals left is partial', async () => {
    harness = new Harness({
      agents: [boss([[declare(['a', 'one'], ['b', 'two'], ['c', 'three'])]], { max_sub_goals: 2 }), helper],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'plan' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('I give up');
    expect(run.partial?.reason).toBe('the run answered with 0 of 2 sub-goals completed');
    const [declared] = await progressOf(harness, sessionId, runId);
    expect(declared).toEqual({
      fraction: 0,
      goals: 'a:pending b:pending',
      warning: '3 sub-goals were declared and max_sub_goals is 2: the last 1 were cut (c)',
    });
    // The declaration's tool result says so too.
    const chat = await harness.transcript(sessionId);
    expect(JSON.stringify(chat)).toContain('Warning: 3 sub-goals were declared');
    const ended = (await harness.events(sessionId)).find(
      (event) => event.kind === 'agent_end' && event.run_id === runId,
    );
    expect(ended?.data).toMatchObject({ metadata: { partial: { reason: run.partial?.reason } } });
  });

  it('a supervisor with an output_schema is asked for its structured answer once all are completed', async () => {
    const supervisor = boss([[declare(['a', 'only'])], [delegate('helper', 'a')]]);
    harness = new Harness({
      agents: [
        {
          ...supervisor,
          script: { ...supervisor.script, default: { text: '{"summary": "a is done", "confidence": 0.7}' } },
          options: {
            max_iterations: 10,
            supervisor: {},
            output_schema: { type: 'object', required: ['summary'] },
          },
        },
        helper,
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'do it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('{"summary": "a is done", "confidence": 0.7}');
    expect(run.confidence).toBe(0.7);
    expect(run.partial).toBeNull();
    expect(bossCalls(harness)).toHaveLength(3);
    expect((await progressOf(harness, sessionId, runId)).map((event) => event.goals)).toEqual([
      'a:pending',
      'a:in_progress',
      'a:completed',
    ]);
  });

  it('an update_sub_goal for an unknown id is an error result the model can recover from', async () => {
    harness = new Harness({
      agents: [
        boss([
          [declare(['a', 'mine'])],
          [{ name: 'update_sub_goal', arguments: { id: 'zzz', status: 'completed' } }],
          [{ name: 'update_sub_goal', arguments: { id: 'a', status: 'completed', result: 'did it myself' } }],
        ]),
        helper,
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'do it yourself' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    // Its own update completed the only sub-goal: the run finished on its own, not partial.
    expect(run.result).toBe('The sub-goal is completed.\n\n[✓] a: mine — did it myself');
    expect(run.partial).toBeNull();
    expect(bossCalls(harness)).toHaveLength(3);
    expect(JSON.stringify(await harness.transcript(sessionId))).toContain('no sub-goal \\"zzz\\"');
    expect((await progressOf(harness, sessionId, runId)).map((event) => event.goals)).toEqual([
      'a:pending',
      'a:completed',
    ]);
  });
});
