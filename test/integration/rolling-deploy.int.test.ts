import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { type Engine, engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import { eventBusKeys, runKeys, shardOf, shardPrefix } from '../../src/redis/keys.js';
import { readWorkers } from '../../src/redis/worker-registry.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { testMiddleware } from '../fixtures/middleware-extensions.js';
import { testToolbox } from '../fixtures/test-tools.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { count, eventKinds, shortWaits, spaceOf, started } from '../helpers/generations.js';
import { Harness, type HarnessAgent, type WorkerProcess } from '../helpers/harness.js';

// Issue 33's rolling deploy, with real worker processes on real Redis and scripted models. Generation A runs
// config v1; generation B runs config v2, in which an agent is renamed (`asker` → `inquirer`, and the
// delegation target `helper` → `assistant`), one agent's instructions and model changed and a tool removed
// from it (`looper`: `slow_echo` is gone), an `on_change: upgrade` agent's instructions changed (`mover`), and
// a new agent uses a custom middleware kind only B's code registers (`audited`, `coin_flip`). Runs are in
// flight across the switch: parked on a question, mid tool loop (a `wait_for_event` call in flight, then a
// slow tool), with a delegation in flight (the child parked on a question), a team mid-round (its first
// member parked on a question) and an upgrade run. A and B overlap while some of them go on, a worker is
// SIGKILLed in the middle, A is stopped with SIGTERM, and the rest finish on B.
//
// The team changes too: v2 renames its second member (`scribe` → `columnist`) and makes its coordinator a
// loop. A team's turns use its recorded definition (its coordinator and members), and each member's run
// records the member as the team's definition has it, so the team run finishes as v1's sequence.

let harness: Harness | undefined;
let apiV2: Engine | undefined;
afterEach(async () => {
  await apiV2?.close();
  apiV2 = undefined;
  await harness?.close();
  harness = undefined;
});

const ask = (question: string) => ({ tool_calls: [{ name: 'ask_user', arguments: { question } }] });
const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, arguments: args }] });

function agent(name: string, replies: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return {
    name,
    script: { replies },
    instructions: `V1 ${name}.`,
    options: { max_iterations: 10 },
    ...extra,
  } as HarnessAgent;
}

const v1Agents: HarnessAgent[] = [
  agent('asker', [ask('Which colour?'), { text: 'asker: blue' }]),
  agent(
    'looper',
    [
      call('slow_echo', { text: 'one', delay_ms: 200 }),
      call('wait_for_event', { event: 'looper.go', timeout_s: 600 }),
      call('slow_echo', { text: 'two', delay_ms: 1500 }),
      call('add', { a: 1, b: 2 }),
      { text: 'looper: done' },
    ],
    { toolboxes: ['test', 'waits'] },
  ),
  agent('boss', [
    call('delegate_to_agent', { agent: 'helper', task: 'pick a colour' }),
    { text: 'boss: done' },
  ]),
  agent('helper', [ask('Green or red?'), { text: 'helper: green' }]),
  agent('scout', [ask('Which owl?'), { text: 'facts: barn owls hunt at night' }]),
  agent('scribe', [{ text: 'article: barn owls are nocturnal' }]),
  agent('mover', [ask('Which size?'), call('add', { a: 2, b: 2 }), { text: 'mover: done' }], {
    options: { max_iterations: 10, on_change: 'upgrade' },
  }),
];

const team = {
  name: 'newsroom',
  members: [
    { agent: 'scout', role: 'research' },
    { agent: 'scribe', role: 'write' },
  ],
  coordinator: { kind: 'sequence' },
};

type ConfigEntry = Record<string, unknown> & { name: string };

/** Config v2, from v1 (the harness's own): the changes of the deploy. Providers (and their scripts) stay. */
function v2Config(h: Harness): string {
  const config = JSON.parse(readFileSync(h.configPath, 'utf8')) as {
    agents: ConfigEntry[];
    providers: ConfigEntry[];
    teams: ConfigEntry[];
  };
  const byName = (name: string) => {
    const entry = config.agents.find((each) => each.name === name);
    if (!entry) throw new Error(`no agent ${name} in v1`);
    return entry;
  };
  byName('asker').name = 'inquirer';
  byName('helper').name = 'assistant';
  Object.assign(byName('looper'), {
    instructions: 'V2 looper.',
    toolboxes: [{ name: 'test', tools: ['add'] }, 'waits'],
  });
  const looperModel = config.providers.find((each) => each.name === 'model-looper');
  if (looperModel) looperModel.model = 'test-v2';
  byName('mover').instructions = 'V2 mover.';
  byName('scribe').name = 'columnist';
  config.teams = [
    {
      ...team,
      members: [
        { agent: 'scout', role: 'research' },
        { agent: 'columnist', role: 'write' },
      ],
      coordinator: { kind: 'loop', max_rounds: 3 },
    },
  ];
  config.providers.push({
    name: 'model-audited',
    kind: 'scripted',
    model: 'test',
    replies: [call('add', { a: 3, b: 4 }), { text: 'audited: seven' }],
    record_calls: 'calls.jsonl',
  });
  config.agents.push({
    name: 'audited',
    description: 'an agent with a middleware only generation B has',
    instructions: 'V2 audited.',
    provider: 'model-audited',
    toolboxes: ['test'],
    middleware: [{ kind: 'coin_flip' }],
  });
  const path = join(h.dir, 'v2.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

async function pendingQuestion(engine: Engine, runId: string): Promise<string> {
  let id = '';
  await waitFor(
    async () => {
      id = (await engine.getRun(runId))?.pending_question?.id ?? '';
      return id !== '';
    },
    60_000,
    `run ${runId} to ask its question`,
  );
  return id;
}

/** The one child run of a run (a delegation's child, or a team's member acting now), once it exists. */
async function childOf(h: Harness, sessionId: string, runId: string, agentName: string): Promise<string> {
  let found = '';
  await waitFor(
    async () => {
      const ids = await h.redis.smembers(runKeys(h.engine.space, sessionId, runId).children);
      for (const id of ids) if ((await h.engine.getRun(id))?.agent === agentName) found = id;
      return found !== '';
    },
    60_000,
    `the ${agentName} child of ${runId}`,
  );
  return found;
}

describe('a rolling deploy', () => {
  it('fails no run: pinned runs keep v1, the upgrade run switches once, B-only middleware never runs on A', async () => {
    // A heartbeat window of 3 s rather than 1: on a loaded machine a live worker must not be taken for dead.
    const h = new Harness({
      agents: v1Agents,
      worker: { ...shortWaits, dead_worker_ms: 3_000 },
      config: { teams: [team] },
    });
    harness = h;
    const space = spaceOf(h);
    const v2Path = v2Config(h);
    const loadedV2 = loadConfig(v2Path, {
      knownToolboxes: knownToolboxes([testToolbox()]),
      extensions: { middleware: testMiddleware },
    });
    const v2 = engineFromConfig({ config: loadedV2.config, redis: h.redis, logger: silentLogger() });
    apiV2 = v2;

    // Generation A on v1; runs started through the API on v1.
    // Debug logs say when a worker hands a step back for lack of code.
    const a1 = h.spawnWorker({ env: { RATCHET_LOG_LEVEL: 'debug' } });
    const a2 = h.spawnWorker({ env: { RATCHET_LOG_LEVEL: 'debug' } });
    await started(a1, a2);
    const idsOf = async (...processes: WorkerProcess[]) => {
      let ids: string[] = [];
      await waitFor(
        async () => {
          const live = (await readWorkers(h.redis, space)).filter((entry) => entry.alive);
          ids = processes.map((process) => live.find((entry) => entry.pid === process.child.pid)?.id ?? '');
          return ids.every((id) => id !== '');
        },
        60_000,
        'the workers to advertise what they serve',
      );
      return ids;
    };
    const aIds = await idsOf(a1, a2);
    const v1 = h.engine;
    const asker = await v1.startRun({ input: 'pick a colour', agent: 'asker' });
    const looper = await v1.startRun({ input: 'loop a while', agent: 'looper' });
    const boss = await v1.startRun({ input: 'get a colour picked', agent: 'boss' });
    const newsroom = await v1.startRun({ input: 'write about owls', agent: 'newsroom' });
    const mover = await v1.startRun({ input: 'pick a size', agent: 'mover' });
    const askerQuestion = await pendingQuestion(v1, asker.runId);
    const moverQuestion = await pendingQuestion(v1, mover.runId);
    const helper = await childOf(h, boss.sessionId, boss.runId, 'helper');
    const helperQuestion = await pendingQuestion(v1, helper);
    const scout = await childOf(h, newsroom.sessionId, newsroom.runId, 'scout');
    const scoutQuestion = await pendingQuestion(v1, scout);
    await waitFor(
      async () => (await h.redis.zcard(eventBusKeys(v1.space).waiters('looper.go'))) === 1,
      60_000,
      'the looper to wait for its event',
    );
    const v1Hashes = new Map<string, string | undefined>();
    for (const runId of [asker.runId, looper.runId, boss.runId, helper, scout, mover.runId])
      v1Hashes.set(runId, (await v1.getRun(runId))?.definition?.hash);

    // The API is deployed first: runs of the B-only agent start while only A serves. A takes their steps and
    // hands them back, never running them; with no capable worker for capability_wait_s they wait for one.
    const early = await Promise.all(
      [0, 1].map((index) => v2.startRun({ input: `audit early ${index}`, agent: 'audited' })),
    );
    for (const { runId } of early) {
      await waitFor(
        async () => (await v2.getRun(runId))?.status === 'waiting_for_worker',
        60_000,
        `the early audited run ${runId} to wait for a worker`,
      );
      expect((await v2.getRun(runId))?.waiting_for?.missing).toContain('middleware:coin_flip');
    }
    const handedBack = `${a1.output()}${a2.output()}`;
    expect(handedBack).toContain('step handed back');
    for (const { runId } of early) expect(handedBack).toContain(runId);

    // The first worker of B is SIGKILLed in its first iteration, after its model call (mostly an audited run's,
    // which it took off A's hands; any step it takes may be another run's).
    const b0 = h.spawnWorker({
      configPath: v2Path,
      entry: 'test/fixtures/middleware-worker.ts',
      crashAt: 'iteration.after_model_call',
    });
    expect((await b0.exited).signal).toBe('SIGKILL');
    expect(h.modelCalls().filter((each) => each.pid === b0.child.pid).length).toBeGreaterThanOrEqual(1);

    // Generation B on v2 starts beside A: both serve for a while.
    const b1 = h.spawnWorker({ configPath: v2Path, entry: 'test/fixtures/middleware-worker.ts' });
    const b2 = h.spawnWorker({ configPath: v2Path, entry: 'test/fixtures/middleware-worker.ts' });
    await started(b1, b2);
    await idsOf(b1, b2);
    const bPids = new Set([b0.child.pid, b1.child.pid, b2.child.pid]);

    // While both serve: runs of the B-only agent, the renamed agent's question answered, the loop released.
    const overlapping = await Promise.all(
      Array.from({ length: 4 }, (_, index) => v2.startRun({ input: `audit ${index}`, agent: 'audited' })),
    );
    const audited = [...early, ...overlapping];
    await v2.respond(asker.sessionId, askerQuestion, 'blue');
    await v2.sendEvent({ event: 'looper.go', payload: {} });
    // The loop goes on: once its slow tool call is asked for, the worker that asked is SIGKILLed, and one
    // worker of A is SIGKILLed as well; the other worker of A is stopped with SIGTERM.
    let victimPid = 0;
    await waitFor(
      () => {
        const third = h.modelCalls().find((each) => each.run_id === looper.runId && each.iteration === 3);
        victimPid = third?.pid ?? 0;
        return victimPid !== 0;
      },
      60_000,
      'the looper to ask for its slow tool',
    );
    const everyone = [a1, a2, b1, b2];
    const victim = everyone.find((process) => process.child.pid === victimPid);
    await victim?.kill();
    await a1.kill();
    const stopped = await a2.stop();
    if (victim !== a2) expect(stopped.code).toBe(0);
    // A SIGKILLed B is replaced, as a deploy would.
    if (victim && bPids.has(victimPid)) {
      const b3 = h.spawnWorker({ configPath: v2Path, entry: 'test/fixtures/middleware-worker.ts' });
      bPids.add(b3.child.pid);
      await started(b3);
    }

    // Only B is left: the other questions are answered through the API on v2.
    await v2.respond(boss.sessionId, helperQuestion, 'green');
    await v2.respond(newsroom.sessionId, scoutQuestion, 'barn owl');
    await v2.respond(mover.sessionId, moverQuestion, 'large');

    const roots = [asker, looper, boss, newsroom, mover, ...audited];
    const done = await Promise.all(roots.map(({ runId }) => v2.waitForRun(runId, { timeoutMs: 120_000 })));
    // No run failed.
    expect(
      done.map((run) => [run.agent, run.status, run.error?.code ?? null, run.error?.message ?? null]),
    ).toEqual(roots.map((_, index) => [done[index]?.agent, 'completed', null, null]));
    expect(done.map((run) => run.result)).toEqual([
      'asker: blue',
      'looper: done',
      'boss: done',
      'article: barn owls are nocturnal',
      'mover: done',
      ...audited.map(() => expect.stringMatching(/^audited: seven/)),
    ]);
    for (const child of [helper, scout]) expect((await v2.getRun(child))?.status).toBe('completed');
    // Nothing lost or duplicated in their chats, the SIGKILLs notwithstanding: one message per step.
    const turns = (pairs: number) => [
      'user',
      ...Array(pairs).fill(['assistant', 'tool']).flat(),
      'assistant',
    ];
    const roles = async (sessionId: string) => (await h.transcript(sessionId)).map((message) => message.role);
    expect(await roles(asker.sessionId)).toEqual(turns(1));
    expect(await roles(looper.sessionId)).toEqual(turns(4));
    expect(await roles(boss.sessionId)).toEqual(turns(1));
    expect(await roles(mover.sessionId)).toEqual(turns(2));
    expect(await roles(newsroom.sessionId)).toEqual(['user', 'assistant', 'assistant']);
    for (const { sessionId } of audited) expect(await roles(sessionId)).toEqual(turns(1));

    // Pinned runs were answered with v1's definition on both generations: v1's instructions and tools.
    const calls = h.modelCalls();
    const callsOf = (runId: string) => calls.filter((each) => each.run_id === runId && !each.purpose);
    const pinned = { asker: asker.runId, looper: looper.runId, boss: boss.runId, helper, scout };
    for (const [name, runId] of Object.entries(pinned)) {
      const made = callsOf(runId);
      expect(made.length, name).toBeGreaterThanOrEqual(2);
      for (const each of made) {
        expect(each.system, `${name} iteration ${each.iteration}`).toContain(`V1 ${name}.`);
        expect(each.tools, `${name} iteration ${each.iteration}`).toEqual(made[0]?.tools);
      }
      expect((await v2.getRun(runId))?.definition?.hash, name).toBe(v1Hashes.get(runId));
    }
    // The team finished as v1's sequence on B, whose config renamed its second member and changed its
    // coordinator: its members' runs are v1's scout and scribe, the scribe answering with v1's instructions.
    const newsroomMembers = await Promise.all(
      (await h.redis.smembers(runKeys(h.engine.space, newsroom.sessionId, newsroom.runId).children)).map(
        (id) => v2.getRun(id),
      ),
    );
    expect(newsroomMembers.map((run) => run?.agent).sort()).toEqual(['scout', 'scribe']);
    const scribeCalls = callsOf(newsroomMembers.find((run) => run?.agent === 'scribe')?.id ?? '');
    expect(scribeCalls).toHaveLength(1);
    expect(scribeCalls[0]?.system).toContain('V1 scribe.');
    expect(bPids.has(scribeCalls[0]?.pid)).toBe(true);
    // The looper was offered v1's tools to the end (slow_echo, removed in v2, included), on v1's model.
    // (An iteration whose worker was SIGKILLed before its commit asked the model again: same definition.)
    expect([...new Set(callsOf(looper.runId).map((each) => each.iteration))]).toEqual([1, 2, 3, 4, 5]);
    expect(callsOf(looper.runId).at(-1)?.tools).toContain('slow_echo');
    const looperSteps = await v2.runSteps(looper.runId, { from: 1, limit: 10, cutAt: 200 });
    expect(looperSteps?.steps.map((step) => step.model)).toEqual(['test', 'test', 'test', 'test', 'test']);
    // These runs crossed the switch: their first model call was made by A, their last by B (the renamed
    // delegation target's answer too, as `helper`, a name B's config no longer has).
    const aPids = new Set([a1.child.pid, a2.child.pid]);
    for (const [name, runId] of Object.entries({ looper: looper.runId, boss: boss.runId, helper, scout })) {
      const made = callsOf(runId);
      expect(aPids.has(made[0]?.pid), `${name}'s first call by A`).toBe(true);
      expect(
        bPids.has(made.at(-1)?.pid),
        `${name}'s last call by B: ${JSON.stringify(made.map((each) => [each.iteration, each.pid, each.messages.at(-1)?.text]))}`,
      ).toBe(true);
      expect(made.at(-1)?.agent).toBe(name);
    }

    // The upgrade run switched once, at an iteration boundary, on B: iteration 1 on v1, the rest on v2.
    const moverCalls = callsOf(mover.runId);
    expect(moverCalls.map((each) => [each.iteration, each.system.includes('V2 mover.')])).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    expect(moverCalls[0]?.system).toContain('V1 mover.');
    expect(aPids.has(moverCalls[0]?.pid)).toBe(true);
    expect(moverCalls.slice(1).every((each) => bPids.has(each.pid))).toBe(true);
    const moverEvents = (await h.events(mover.sessionId)).filter(
      (event) => event.kind === 'agent_upgraded' && event.run_id === mover.runId,
    );
    expect(moverEvents.map((event) => event.data)).toEqual([
      {
        from: v1Hashes.get(mover.runId),
        to: done[4]?.definition?.hash,
        changed: ['instructions'],
        reason: null,
      },
    ]);
    expect(done[4]?.definition?.hash).not.toBe(v1Hashes.get(mover.runId));
    // No pinned run was upgraded.
    for (const { sessionId } of [asker, looper, boss, newsroom])
      expect(count(await eventKinds(h, sessionId), 'agent_upgraded')).toBe(0);

    // Every step of the audited runs ran on B: each execution's attempt note names its worker, never A's.
    for (const { runId, sessionId } of audited) {
      const journal = await h.redis.hgetall(
        `${shardPrefix(space, shardOf(space, sessionId))}:run:${runId}:journal`,
      );
      const notes = Object.entries(journal).filter(([field]) => field.startsWith('attempts:'));
      expect(notes.length).toBeGreaterThan(0);
      for (const [, value] of notes) for (const id of aIds) expect(value).not.toContain(id);
    }
    // Those started while B served never waited: their steps went to B. The early ones waited once.
    for (const { sessionId } of overlapping)
      expect(count(await eventKinds(h, sessionId), 'waiting_for_worker')).toBe(0);
    for (const { sessionId } of early) {
      const kinds = await eventKinds(h, sessionId);
      // Once at least (again if it was handed back while B's only worker lay dead), and every wait was
      // ended by a worker of B: exactly one worker_found per waiting_for_worker, each after its wait.
      const waits = kinds.filter((kind) => kind === 'waiting_for_worker' || kind === 'worker_found');
      expect(count(kinds, 'waiting_for_worker')).toBeGreaterThanOrEqual(1);
      expect(waits).toEqual(
        waits.map((_, index) => (index % 2 === 0 ? 'waiting_for_worker' : 'worker_found')),
      );
      expect(waits.length % 2).toBe(0);
    }
    for (const { runId } of audited) expect(callsOf(runId).every((each) => bPids.has(each.pid))).toBe(true);
  }, 240_000);
});
