import { afterEach, describe, expect, it } from 'vitest';
import { engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import { definitionKey, runKeys } from '../../src/redis/keys.js';
import { createTestEngine, type TestEngine } from '../../src/testing/index.js';
import { agentDefinitionSchema } from '../../src/workflows/index.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { childParkedOnQuestion, deployConfig, parkedOnQuestion } from '../helpers/deploy.js';

// Decision 0030: a run keeps the definition it started with. A run parked on a question crosses a restart of
// its worker and API on a config where its agent was renamed, or its instructions and model changed: the
// answered run completes, and the scripted model is sent v1's instructions and tools.

const engines: TestEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

const replies = [
  { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
  { text: 'blue it is' },
];

function config(agent: Record<string, unknown>, model = 'test-v1') {
  return {
    providers: [{ name: 'model', kind: 'scripted', model, replies }],
    agents: [{ provider: 'model', options: { max_iterations: 5 }, ...agent }],
  };
}

const v1 = config({ name: 'helper', instructions: 'V1: answer in one word.' });

describe('a run keeps its definition across a deploy', () => {
  for (const [change, next] of [
    ['renamed', config({ name: 'assistant', instructions: 'V1: answer in one word.' })],
    [
      'given new instructions and a new model',
      config({ name: 'helper', instructions: 'V2: be chatty.' }, 'test-v2'),
    ],
  ] as const) {
    it(`completes with v1's definition when its agent was ${change}`, async () => {
      const engine = await createTestEngine({ config: v1 });
      engines.push(engine);
      const first = engine.spawnWorker();
      const { runId, sessionId, questionId } = await parkedOnQuestion(engine);
      const run = await engine.engine.getRun(runId);
      expect(run?.definition?.hash).toMatch(/^[0-9a-f]{32}$/);
      // The worker and the API stop; both come back on config v2.
      expect((await first.stop()).code).toBe(0);
      const loaded = deployConfig(engine, next);
      const api = engineFromConfig({ config: loaded.config, redis: engine.redis, logger: silentLogger() });
      try {
        const second = engine.spawnWorker();
        await api.respond(sessionId, questionId, 'blue');
        const done = await api.waitForRun(runId, { timeoutMs: 30_000 });
        expect(done.status, JSON.stringify(done.error)).toBe('completed');
        expect(done.result).toBe('blue it is');
        expect(done.definition).toEqual(run?.definition);
        // Both replies were made by v1's model, the second by a v2 worker.
        const timeline = await api.runSteps(runId, { from: 1, limit: 10, cutAt: 200 });
        expect(timeline?.steps.map((step) => step.model)).toEqual(['test-v1', 'test-v1']);
        const calls = engine.modelCalls().filter((call) => call.run_id === runId);
        expect(calls.map((call) => call.iteration)).toEqual([1, 2]);
        for (const call of calls) {
          expect((call as unknown as { system: string }).system).toContain('V1: answer in one word.');
          expect((call as unknown as { tools: string[] }).tools).toContain('ask_user');
        }
        await second.stop();
        await waitForExit(second, 10_000);
      } finally {
        await api.close();
      }
    }, 60_000);
  }

  it('stores one definition for many runs, with no secret and no environment value in it', async () => {
    process.env.RATCHET_TEST_SECRET_KEY = 'sk-very-secret-value-123';
    process.env.RATCHET_TEST_PLAIN = 'plain-value-from-env';
    const engine = await createTestEngine({
      config: {
        providers: [{ name: 'model', kind: 'scripted', model: 'test', replies: [{ text: 'ok' }] }],
        agents: [
          {
            name: 'helper',
            provider: 'model',
            instructions: `Costs $5. Ask \${RATCHET_TEST_PLAIN} with key \${RATCHET_TEST_SECRET_KEY}.`,
          },
        ],
      },
    });
    engines.push(engine);
    const runs = 200;
    const started = await Promise.all(
      Array.from({ length: runs }, (_, index) => engine.start({ input: `task ${index}` })),
    );
    const hashes = new Set(
      await Promise.all(
        started.map(async ({ runId }) => (await engine.engine.getRun(runId))?.definition?.hash),
      ),
    );
    expect(hashes.size).toBe(1);
    const keys = await engine.redis.keys(`${engine.prefix}:def:*`);
    expect(keys).toHaveLength(1);
    const [hash] = [...hashes];
    const stored = (await engine.redis.get(definitionKey({ prefix: engine.prefix }, hash ?? ''))) ?? '';
    expect(stored).not.toContain('sk-very-secret-value-123');
    expect(stored).not.toContain('plain-value-from-env');
    const definition = agentDefinitionSchema.parse(JSON.parse(stored));
    expect(definition.entry.instructions).toBe(
      `Costs $$5. Ask \${RATCHET_TEST_PLAIN} with key \${RATCHET_TEST_SECRET_KEY}.`,
    );
    expect(definition.providers).toEqual({ model: { kind: 'scripted', model: 'test' } });
    // A worker expands the references with its own environment: the model is sent the values.
    const worker = await engine.startWorker();
    const done = await engine.engine.waitForRun(started[0]?.runId ?? '', { timeoutMs: 20_000 });
    expect(done.status).toBe('completed');
    await worker.close(2000);
  }, 60_000);

  // Found by the rolling-deploy test: the parked delegate_to_agent step of a parent, run again on a worker
  // whose config renamed the child's agent (its safety-net recheck), refused the name and gave the parent an
  // error result while the child was still working. A child the call already started is waited for.
  it('a delegation in flight survives a deploy that renames the child agent', async () => {
    const delegating = (helper: string) => ({
      providers: [
        {
          name: 'boss-model',
          kind: 'scripted',
          model: 'test',
          replies: [
            { tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'pick one' } }] },
            { text: 'boss: done' },
          ],
        },
        { name: 'helper-model', kind: 'scripted', model: 'test', replies },
      ],
      agents: [
        { name: 'boss', provider: 'boss-model', instructions: 'Boss.' },
        { name: helper, provider: 'helper-model', instructions: 'V1: answer in one word.' },
      ],
      worker: { question_recheck_ms: 300 },
    });
    const engine = await createTestEngine({ config: delegating('helper') });
    engines.push(engine);
    const first = engine.spawnWorker();
    const boss = await engine.start({ input: 'get one picked', agent: 'boss' });
    const { questionId } = await childParkedOnQuestion(engine, boss);
    expect((await first.stop()).code).toBe(0);
    const loaded = deployConfig(engine, delegating('assistant'));
    const api = engineFromConfig({ config: loaded.config, redis: engine.redis, logger: silentLogger() });
    try {
      engine.spawnWorker();
      // The parent's parked tool step is looked at again by the new worker (every question_recheck_ms).
      const since = Date.now();
      await waitFor(() => Date.now() - since >= 2_000, 10_000, 'a few rechecks');
      expect((await api.getRun(boss.runId))?.status).not.toBe('completed');
      await api.respond(boss.sessionId, questionId, 'blue');
      const done = await api.waitForRun(boss.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('completed');
      const second = engine.modelCalls().find((call) => call.run_id === boss.runId && call.iteration === 2);
      const sent = (second as unknown as { messages: { text: string }[] }).messages.at(-1)?.text;
      expect(sent).toContain('blue it is');
    } finally {
      await api.close();
    }
  }, 60_000);

  // A team's own turns use its recorded definition too: its coordinator and its members as the run started
  // with them, and each member's run records the member as the team's definition has it.
  it('a team run mid-round finishes with its recorded members and coordinator after a deploy changes its team', async () => {
    const ask = (question: string) => ({ tool_calls: [{ name: 'ask_user', arguments: { question } }] });
    const newsroom = (version: 1 | 2) => ({
      providers: [
        {
          name: 'scout-model',
          kind: 'scripted',
          model: 'test',
          replies: [ask('Which owl?'), { text: 'facts: barn owls hunt at night' }],
        },
        {
          name: 'scribe-model',
          kind: 'scripted',
          model: 'test',
          replies: [{ text: 'article: barn owls are nocturnal' }],
        },
        { name: 'v2-model', kind: 'scripted', model: 'test', replies: [{ text: 'v2 wrote this' }] },
      ],
      // v2: the scout is removed, the scribe renamed (with new instructions), a new member added, and the
      // coordinator changed from a sequence to a loop.
      agents:
        version === 1
          ? [
              { name: 'scout', provider: 'scout-model', instructions: 'V1 scout.' },
              { name: 'scribe', provider: 'scribe-model', instructions: 'V1 scribe.' },
            ]
          : [
              { name: 'writer', provider: 'scribe-model', instructions: 'V2 writer.' },
              { name: 'editor', provider: 'v2-model', instructions: 'V2 editor.' },
            ],
      teams: [
        version === 1
          ? {
              name: 'newsroom',
              members: [
                { agent: 'scout', role: 'research' },
                { agent: 'scribe', role: 'write' },
              ],
              coordinator: { kind: 'sequence' },
            }
          : {
              name: 'newsroom',
              members: [{ agent: 'editor' }, { agent: 'writer', role: 'write' }],
              coordinator: { kind: 'loop', max_rounds: 3 },
            },
      ],
      worker: { question_recheck_ms: 300 },
    });
    const engine = await createTestEngine({ config: newsroom(1) });
    engines.push(engine);
    const first = engine.spawnWorker();
    const team = await engine.start({ input: 'write about owls', agent: 'newsroom' });
    const { questionId } = await childParkedOnQuestion(engine, team);
    const recorded = (await engine.engine.getRun(team.runId))?.definition;
    expect((await first.stop()).code).toBe(0);
    const loaded = deployConfig(engine, newsroom(2));
    const api = engineFromConfig({ config: loaded.config, redis: engine.redis, logger: silentLogger() });
    try {
      const second = engine.spawnWorker();
      await api.respond(team.sessionId, questionId, 'barn owl');
      const done = await api.waitForRun(team.runId, { timeoutMs: 30_000 });
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(done.result).toContain('article: barn owls are nocturnal');
      expect(done.definition).toEqual(recorded);
      // Two turns, as v1's sequence of two members: the scout, then the scribe (a name v2 no longer has).
      const children = await engine.redis.smembers(
        runKeys(engine.engine.space, team.sessionId, team.runId).children,
      );
      const members = await Promise.all(children.map((id) => api.getRun(id)));
      expect(members.map((run) => run?.agent).sort()).toEqual(['scout', 'scribe']);
      for (const run of members) expect(run?.status).toBe('completed');
      const calls = engine.modelCalls();
      const scribe = members.find((run) => run?.agent === 'scribe');
      const scribeCalls = calls.filter((call) => call.run_id === scribe?.id);
      expect(scribeCalls).toHaveLength(1);
      // The scribe's turn was taken by the v2 worker, with v1's instructions.
      expect(scribeCalls[0]?.pid).toBe(second.child.pid);
      expect((scribeCalls[0] as unknown as { system: string }).system).toContain('V1 scribe.');
      // The scribe's run records the scribe as the team's definition has it: the v1 agent's own hash.
      expect(scribe?.definition?.hash).toMatch(/^[0-9a-f]{32}$/);
      const stored = agentDefinitionSchema.parse(
        JSON.parse(
          (await engine.redis.get(
            definitionKey({ prefix: engine.prefix }, scribe?.definition?.hash ?? ''),
          )) ?? '',
        ),
      );
      expect(stored).toMatchObject({ kind: 'agent', name: 'scribe', entry: { instructions: 'V1 scribe.' } });
      // Nothing of v2's team ran.
      expect(calls.some((call) => (call as unknown as { system: string }).system.includes('V2'))).toBe(false);
      await second.stop();
    } finally {
      await api.close();
    }
  }, 90_000);

  it('a handoff group mid-run keeps its recorded members after a deploy renames one and changes the group', async () => {
    const transfer = (to: string) => ({ tool_calls: [{ name: `transfer_to_${to}`, arguments: {} }] });
    const desk = (version: 1 | 2) => ({
      providers: [
        {
          name: 'triage-model',
          kind: 'scripted',
          model: 'test',
          rules: [{ when: { role: 'user', contains: 'help' }, reply: transfer('expert') }],
        },
        {
          name: 'expert-model',
          kind: 'scripted',
          model: 'test',
          rules: [
            {
              when: { role: 'tool', contains: 'transferred to expert' },
              reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
            },
            { when: { role: 'tool', contains: 'blue' }, reply: { text: 'expert: blue it is' } },
          ],
        },
      ],
      // v2: the expert is renamed (with new instructions) and the group's members follow it.
      agents: [
        { name: 'triage', provider: 'triage-model', instructions: 'V1 triage.' },
        version === 1
          ? { name: 'expert', provider: 'expert-model', instructions: 'V1 expert.' }
          : { name: 'specialist', provider: 'expert-model', instructions: 'V2 specialist.' },
      ],
      handoffs: [{ name: 'desk', members: ['triage', version === 1 ? 'expert' : 'specialist'] }],
      worker: { question_recheck_ms: 300 },
    });
    const engine = await createTestEngine({ config: desk(1) });
    engines.push(engine);
    const first = engine.spawnWorker();
    const { runId, sessionId, questionId } = await (async () => {
      const started = await engine.start({ input: 'help me pick', agent: 'desk' });
      let id = '';
      await waitFor(
        async () => {
          id = (await engine.engine.getRun(started.runId))?.pending_question?.id ?? '';
          return id !== '';
        },
        60_000,
        'the expert to ask its question',
      );
      return { ...started, questionId: id };
    })();
    const recorded = (await engine.engine.getRun(runId))?.definition;
    expect((await first.stop()).code).toBe(0);
    const loaded = deployConfig(engine, desk(2));
    const api = engineFromConfig({ config: loaded.config, redis: engine.redis, logger: silentLogger() });
    try {
      const second = engine.spawnWorker();
      // A loaded machine may take a while to start a worker process: the answer waits for it.
      await api.respond(sessionId, questionId, 'blue');
      const done = await api.waitForRun(runId, { timeoutMs: 60_000 });
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(done.result).toBe('expert: blue it is');
      expect(done.definition).toEqual(recorded);
      const calls = engine
        .modelCalls()
        .filter((call) => call.run_id === runId)
        .map((call) => call as unknown as { agent: string; system: string; pid: number; tools: string[] });
      expect(calls.map((call) => call.agent)).toEqual(['triage', 'expert', 'expert']);
      // The expert's answer was made by the v2 worker, as v1 recorded the expert and the group.
      const last = calls.at(-1);
      expect(last?.pid).toBe(second.child.pid);
      expect(last?.system).toContain('V1 expert.');
      expect(last?.tools).toContain('transfer_to_triage');
      expect(calls.some((call) => call.system.includes('V2'))).toBe(false);
      await second.stop();
    } finally {
      await api.close();
    }
  }, 90_000);
});
