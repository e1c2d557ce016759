import { afterEach, describe, expect, it } from 'vitest';
import { engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import { createTestEngine, type TestEngine } from '../../src/testing/index.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { childParkedOnQuestion, deployConfig } from '../helpers/deploy.js';

// Decision 0047: what a child run inherits is recorded when it starts. A v1 worker starts a delegation from
// `boss` (toolbox `utils`, and the `options.delegate` default on: v1 has three agents) to `helper`, which
// inherits `utils` and parks on a question. Config v2 drops `utils` from `boss` and has `boss` alone (the
// default turns off; `helper` is gone too). Both runs finish on a v2 worker with v1's tools: the child calls
// `calculate` (its inherited tool), and the scripted model is sent the tools v1 gave each run.

const engines: TestEngine[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const engine of engines.splice(0)) await engine.close();
});

const ask = { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which sum?' } }] };
const calculate = { tool_calls: [{ name: 'calculate', arguments: { expression: '2 + 3' } }] };
const delegate = {
  tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'add two numbers' } }],
};

const providers = [
  { name: 'boss-model', kind: 'scripted', model: 'test', replies: [delegate, { text: 'boss: done' }] },
  { name: 'helper-model', kind: 'scripted', model: 'test', replies: [ask, calculate, { text: 'helper: 5' }] },
  { name: 'clerk-model', kind: 'scripted', model: 'test', replies: [{ text: 'clerk' }] },
];

const v1 = {
  providers,
  agents: [
    { name: 'boss', provider: 'boss-model', instructions: 'Boss.', toolboxes: ['utils'] },
    { name: 'helper', provider: 'helper-model', instructions: 'Helper.' },
    { name: 'clerk', provider: 'clerk-model', instructions: 'Clerk.' },
  ],
  worker: { question_recheck_ms: 300 },
};

const v2 = {
  providers,
  agents: [{ name: 'boss', provider: 'boss-model', instructions: 'Boss.' }],
  worker: { question_recheck_ms: 300 },
};

interface Call {
  pid: number;
  run_id: string;
  iteration: number;
  tools: string[];
  messages: { role: string; text: string }[];
}

/**
 * The deploy: a v1 worker starts the delegation and stops once the child asks; the answer comes through an
 * API on v2, and v2 workers finish both runs (the first armed with `crashAt`, and a second started once it
 * died). Gives the runs' model calls and the pid of the v2 worker that finished them.
 */
async function acrossTheDeploy(crashAt?: string) {
  const engine = await createTestEngine({ config: v1 });
  engines.push(engine);
  const first = engine.spawnWorker();
  const boss = await engine.start({ input: 'get a sum', agent: 'boss' });
  const { child, questionId } = await childParkedOnQuestion(engine, boss);
  const calls = () => engine.modelCalls() as unknown as Call[];
  const callOf = (runId: string, iteration: number) =>
    calls()
      .filter((call) => call.run_id === runId && call.iteration === iteration)
      .at(-1);
  // On v1: the child has its own tools, boss's `utils` and the delegation tools (three agents).
  const before = callOf(child, 1);
  expect(before?.tools).toEqual(expect.arrayContaining(['calculate', 'delegate_to_agent', 'list_agents']));
  expect((await first.stop()).code).toBe(0);

  const loaded = deployConfig(engine, v2);
  const api = engineFromConfig({ config: loaded.config, redis: engine.redis, logger: silentLogger() });
  closers.push(() => api.close());
  let finisher = engine.spawnWorker(crashAt ? { crashAt } : {});
  await api.respond(boss.sessionId, questionId, 'two and three');
  if (crashAt) {
    await waitForExit(finisher, 60_000);
    expect(finisher.output()).toContain(`crash point ${crashAt.split('@')[0]} reached`);
    finisher = engine.spawnWorker();
  }
  const done = await api.waitForRun(boss.runId, { timeoutMs: 90_000 });
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  expect(done.result).toBe('boss: done');
  const helperDone = await api.getRun(child);
  expect(helperDone?.status).toBe('completed');
  expect(helperDone?.result).toBe('helper: 5');
  return { boss, child, before, callOf, finisherPid: finisher.child.pid };
}

describe('a child run keeps what it inherited across a deploy (decision 0047)', () => {
  it("a delegation's child and its parent finish on a v2 worker with v1's inherited toolbox and delegate default", async () => {
    const { boss, child, before, callOf, finisherPid } = await acrossTheDeploy();
    // The child's later calls were the v2 worker's, with v1's tools: its own, boss's `utils` as v1's boss
    // had it, and the delegation tools of v1's default.
    for (const iteration of [2, 3]) {
      const call = callOf(child, iteration);
      expect(call?.pid).toBe(finisherPid);
      expect(call?.tools).toEqual(before?.tools);
    }
    // `calculate` ran on the v2 worker (a tool of the inherited toolbox) and gave its result.
    expect(callOf(child, 3)?.messages.at(-1)?.text).toContain('"result":5');
    // The parent's second iteration too: its own `utils` (its recorded definition) and v1's delegate default.
    const bossAfter = callOf(boss.runId, 2);
    expect(bossAfter?.pid).toBe(finisherPid);
    expect(bossAfter?.tools).toEqual(callOf(boss.runId, 1)?.tools);
    expect(bossAfter?.tools).toEqual(expect.arrayContaining(['calculate', 'delegate_to_agent']));
  }, 150_000);

  it('what the child inherited survives a SIGKILL of the v2 worker before its model call: the next v2 worker sends the same tools', async () => {
    // The v2 worker's second model call is the child's third iteration, after its `calculate` call.
    const { child, before, callOf, finisherPid } = await acrossTheDeploy('iteration.before_model_call@2');
    const last = callOf(child, 3);
    expect(last?.pid).toBe(finisherPid);
    expect(last?.tools).toEqual(before?.tools);
    expect(last?.messages.at(-1)?.text).toContain('"result":5');
  }, 180_000);
});
