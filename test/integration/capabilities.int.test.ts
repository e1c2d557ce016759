import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { type Engine, engineFromConfig } from '../../src/engine/index.js';
import type { Extensions } from '../../src/extensions/extensions.js';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis, redisTargetOf } from '../../src/redis/connection.js';
import { shardOf, shardPrefix, stepQueueName } from '../../src/redis/keys.js';
import { readWorkers } from '../../src/redis/worker-registry.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { stepJobId } from '../../src/workflows/ids.js';
import { testContractRules } from '../fixtures/contract-rule-extensions.js';
import { testMiddleware } from '../fixtures/middleware-extensions.js';
import { testToolbox } from '../fixtures/test-tools.js';
import { waitFor } from '../helpers/crash-scenario.js';
import {
  count,
  eventKinds,
  generationsHarness,
  olderConfig,
  shortWaits,
  spaceOf,
  started,
  statusOf,
} from '../helpers/generations.js';
import { Harness } from '../helpers/harness.js';

// Decision 0031: a step whose code its worker lacks goes back to the queue for a worker that has it, without
// spending an attempt and without spinning; when no live worker has it for worker.capability_wait_s, its run
// shows waiting_for_worker (recorded once, with its event) and resumes by itself when a capable worker
// starts. Real worker processes of two generations on real Redis: generation A's config (v1) lacks an agent
// that the run needs, generation B's (v2, the harness's own) has it. The run records its definition
// (decision 0030), so what a worker lacks is named by what that definition needs: the agent `clerk`'s
// provider, `provider:model-clerk`, which A's config does not have.

let harness: Harness | undefined;
let extraEngine: Engine | undefined;
afterEach(async () => {
  await extraEngine?.close();
  extraEngine = undefined;
  await harness?.close();
  harness = undefined;
});

function newHarness(): Harness {
  harness = generationsHarness();
  return harness;
}

/** The step queue of the run's session's shard, and how to close it with its connection. */
function queueOf(h: Harness, sessionId: string) {
  const space = spaceOf(h);
  const connection = createRedis({
    ...redisTargetOf(h.loaded.config.redis),
    logger: silentLogger(),
    name: 'test-queue',
  });
  const queue = new Queue(stepQueueName, {
    connection,
    prefix: shardPrefix(space, shardOf(space, sessionId)),
  });
  return {
    queue,
    close: async () => {
      await queue.close();
      await closeRedis(connection);
    },
  };
}

/** Config v2 (written beside the harness's) with code of its own, and an engine that starts runs under it. */
function newGeneration(h: Harness, v2: unknown, extensions: Extensions) {
  const v2Path = join(h.dir, 'v2.json');
  writeFileSync(v2Path, JSON.stringify(v2, null, 2));
  const loaded = loadConfig(v2Path, { knownToolboxes: knownToolboxes([testToolbox()]), extensions });
  const engine = engineFromConfig({ config: loaded.config, redis: h.redis, logger: silentLogger() });
  extraEngine = engine;
  return { v2Path, engine };
}

/**
 * Worker A (the harness's config, the test worker's code) and worker B (config `v2Path`, the code of
 * `entry`), started and both advertising what they serve in the registry.
 */
async function workersAandB(h: Harness, v2Path: string, entry: string) {
  const a = h.spawnWorker({ env: { RATCHET_LOG_LEVEL: 'debug' } });
  const b = h.spawnWorker({ configPath: v2Path, entry });
  await started(a, b);
  const space = spaceOf(h);
  await waitFor(
    async () => (await readWorkers(h.redis, space)).filter((worker) => worker.alive).length === 2,
    30_000,
    'both workers to advertise what they serve',
  );
  const workers = await readWorkers(h.redis, space);
  const workerA = workers.find((worker) => worker.pid === a.child.pid);
  const workerB = workers.find((worker) => worker.pid === b.child.pid);
  if (!workerA || !workerB) throw new Error('a worker is not in the registry');
  return { a, b, workerA, workerB };
}

/**
 * Six runs of `agent` started on `engine` complete without ever waiting for a worker, and every execution of
 * every step of them was B's (each execution's attempt note names its worker), as was every model call; A
 * took some and handed them back.
 */
async function expectRunsOnlyOnB(
  h: Harness,
  engine: Engine,
  agent: string,
  { a, b, workerA, workerB }: Awaited<ReturnType<typeof workersAandB>>,
) {
  const space = spaceOf(h);
  const runs = await Promise.all(
    Array.from({ length: 6 }, (_, index) => engine.startRun({ input: `add ${index}`, agent })),
  );
  for (const { runId, sessionId } of runs) {
    const run = await engine.waitForRun(runId, { timeoutMs: 90_000 });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    const kinds = await eventKinds(h, sessionId);
    // B is live and serves it: the step goes back to the queue for B, and the run never waits.
    expect(count(kinds, 'waiting_for_worker')).toBe(0);
    expect(count(kinds, 'error')).toBe(0);
    const journal = await h.redis.hgetall(
      `${shardPrefix(space, shardOf(space, sessionId))}:run:${runId}:journal`,
    );
    const notes = Object.entries(journal).filter(([field]) => field.startsWith('attempts:'));
    expect(notes.length).toBeGreaterThan(0);
    for (const [, value] of notes) {
      expect(value).toContain(workerB.id);
      expect(value).not.toContain(workerA.id);
    }
  }
  expect(h.modelCalls().every((call) => call.pid === b.child.pid)).toBe(true);
  expect(a.output()).toContain('step handed back');
  return Promise.all(runs.map(({ runId }) => engine.getRun(runId)));
}

describe('a step needing code no live worker has', () => {
  it('waits as waiting_for_worker within capability_wait_s, spins no worker, and completes once a worker with it starts', async () => {
    const h = newHarness();
    const older = h.spawnWorker({ configPath: olderConfig(h) });
    await started(older);
    const startedAt = Date.now();
    const { runId, sessionId } = await h.engine.startRun({ input: 'add 2 and 3', agent: 'clerk' });
    await waitFor(
      async () => (await statusOf(h, runId)) === 'waiting_for_worker',
      30_000,
      'the run to wait for a worker',
    );
    const waitedMs = Date.now() - startedAt;
    const waiting = await h.engine.getRun(runId);
    expect(waiting?.waiting_for?.missing).toEqual(['provider:model-clerk']);
    // capability_wait_s is 1 s: recorded after it, and well within a few rechecks on a loaded machine.
    expect(waitedMs).toBeGreaterThanOrEqual(1_000);

    // The older worker holds nothing and does not spin: its hand-backs of the step over a few seconds are
    // one per recheck (1.5 s) at most, and the step is parked in the delayed set with no attempt spent.
    const { queue, close } = queueOf(h, sessionId);
    try {
      const jobId = stepJobId.iteration(runId, 1);
      const before = await queue.getJob(jobId);
      const windowStart = Date.now();
      await waitFor(() => Date.now() - windowStart >= 4_500, 10_000, 'a window of hand-backs');
      const after = await queue.getJob(jobId);
      if (!before || !after) throw new Error('the step job is gone');
      expect(after.attemptsStarted - before.attemptsStarted).toBeLessThanOrEqual(4);
      expect(after.attemptsMade).toBe(0);
      // Parked in the delayed set between hand-backs (it is taken for a few milliseconds at each recheck).
      await waitFor(() => after.isDelayed(), 10_000, 'the step to be parked');
      expect(h.modelCalls()).toHaveLength(0);

      // A worker of the new generation starts: it sees the waiting step, ends the wait, and the run completes.
      const newer = h.spawnWorker();
      const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
      expect(run.status).toBe('completed');
      expect(run.result).toBe('five');
      expect(run.waiting_for).toBeUndefined();
      expect(h.modelCalls().map((call) => call.pid)).toEqual([newer.child.pid, newer.child.pid]);
      const kinds = await eventKinds(h, sessionId);
      expect(count(kinds, 'waiting_for_worker')).toBe(1);
      expect(count(kinds, 'worker_found')).toBe(1);
      expect(kinds.indexOf('waiting_for_worker')).toBeLessThan(kinds.indexOf('worker_found'));
      // No attempt of any step failed (a spent attempt is announced as an error event).
      expect(count(kinds, 'error')).toBe(0);
      const found = (await h.events(sessionId)).find((event) => event.kind === 'worker_found');
      const workers = await readWorkers(h.redis, spaceOf(h));
      expect(found?.data).toMatchObject({
        missing: ['provider:model-clerk'],
        worker_id: workers.find((entry) => entry.pid === newer.child.pid)?.id,
      });
    } finally {
      await close();
    }
  }, 180_000);

  it('a run cancelled while it waits for a worker leaves nothing waiting', async () => {
    const h = newHarness();
    const older = h.spawnWorker({ configPath: olderConfig(h) });
    await started(older);
    const { runId } = await h.engine.startRun({ input: 'add 2 and 3', agent: 'clerk' });
    await waitFor(
      async () => (await statusOf(h, runId)) === 'waiting_for_worker',
      30_000,
      'the run to wait for a worker',
    );
    const waitingSteps = `${h.prefix}:{workers}:waiting-steps`;
    expect(await h.redis.hkeys(waitingSteps)).toEqual([stepJobId.iteration(runId, 1)]);
    await h.engine.cancelRun(runId, 'no longer needed');
    expect(await statusOf(h, runId)).toBe('cancelled');
    // The older worker, which cannot serve it, notices the run ended and removes its entry.
    await waitFor(async () => (await h.redis.hlen(waitingSteps)) === 0, 30_000, 'the entry to go');
  }, 120_000);

  it('a live worker taken for dead registers again, with what it serves, at its next heartbeat', async () => {
    const h = newHarness();
    const space = spaceOf(h);
    // The newer worker serves `clerk`; the older does not. The newer is frozen (SIGSTOP) past its heartbeat
    // window, so the older takes it for dead and removes its registry entry; then it goes on (SIGCONT).
    const older = h.spawnWorker({ configPath: olderConfig(h) });
    const newer = h.spawnWorker();
    await started(older, newer);
    const entryOf = async (pid: number | undefined) =>
      (await readWorkers(h.redis, space)).find((entry) => entry.pid === pid);
    await waitFor(async () => (await entryOf(newer.child.pid))?.alive === true, 30_000, 'the newer entry');
    const before = await entryOf(newer.child.pid);
    const pid = newer.child.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      await waitFor(
        async () => (await entryOf(pid)) === undefined,
        60_000,
        'the older worker to take the frozen one for dead and remove its entry',
      );
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(
      async () => (await entryOf(pid))?.alive === true,
      30_000,
      'the newer worker to register again',
    );
    const again = await entryOf(pid);
    expect(again?.id).toBe(before?.id);
    expect(again?.capabilities).toEqual(before?.capabilities);
    expect(again?.capabilities?.agents).toContain('clerk');
    expect(newer.output()).toContain('registered again');
    // Registered, it is counted live: a run only it serves goes to it without waiting for a worker.
    const { runId, sessionId } = await h.engine.startRun({ input: 'add 2 and 3', agent: 'clerk' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(count(await eventKinds(h, sessionId), 'waiting_for_worker')).toBe(0);
    expect(h.modelCalls().every((call) => call.pid === pid)).toBe(true);
  }, 180_000);

  it('a step needing a middleware kind only worker B has is never run by worker A, both live', async () => {
    const h = newHarness();
    // v2 has an agent with the `coin_flip` middleware; only B's worker code registers that kind.
    const v2 = JSON.parse(readFileSync(h.configPath, 'utf8'));
    v2.agents.push({
      name: 'audited',
      description: 'the audited agent',
      provider: 'model-clerk',
      toolboxes: ['test'],
      middleware: [{ kind: 'coin_flip' }],
    });
    const { v2Path, engine } = newGeneration(h, v2, { middleware: testMiddleware });
    const workers = await workersAandB(h, v2Path, 'test/fixtures/middleware-worker.ts');
    expect(workers.workerA.capabilities?.middleware).not.toContain('coin_flip');
    expect(workers.workerB.capabilities?.middleware).toContain('coin_flip');
    expect(workers.workerB.capabilities?.agents).toContain('audited');
    await expectRunsOnlyOnB(h, engine, 'audited', workers);
  }, 180_000);

  it('a step whose contract names a rule kind only worker B has is never run by worker A, and the run completes', async () => {
    const h = new Harness({
      agents: [
        { name: 'agent', script: { replies: [{ text: 'hi' }] } },
        { name: 'checker', script: { replies: [{ text: '{"total": 5}' }] } },
      ],
      worker: shortWaits,
    });
    harness = h;
    // v2 binds the checker's answers by a contract with the `coin_rule` rule kind, which only B's worker
    // code registers; A runs the harness's own config (the same agent, no contract).
    const ruleLog = join(h.dir, 'rule.log');
    const v2 = JSON.parse(readFileSync(h.configPath, 'utf8'));
    v2.contracts = [
      {
        from_agent: 'checker',
        schema: { required: { total: 'number' }, rules: [{ kind: 'coin_rule', params: { log: ruleLog } }] },
      },
    ];
    const { v2Path, engine } = newGeneration(h, v2, { contractRules: testContractRules });
    const workers = await workersAandB(h, v2Path, 'test/fixtures/contract-rule-worker.ts');
    expect(workers.workerA.capabilities?.contract_rules).toEqual([]);
    expect(workers.workerB.capabilities?.contract_rules).toEqual(['coin_rule']);
    const runs = await expectRunsOnlyOnB(h, engine, 'checker', workers);
    // Every answer was checked by the rule, once, on B.
    for (const run of runs) expect(run?.contract).toMatchObject({ valid: true });
    expect(readFileSync(ruleLog, 'utf8').split('\n').filter(Boolean)).toHaveLength(runs.length);
  }, 180_000);
});
