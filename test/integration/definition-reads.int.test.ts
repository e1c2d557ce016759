import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { definitionKey } from '../../src/redis/keys.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { RatchetWorker } from '../../src/worker/index.js';
import { definitionsOf } from '../../src/workflows/index.js';
import { altToolbox, testToolbox } from '../fixtures/test-tools.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { eventKinds } from '../helpers/generations.js';
import { Harness } from '../helpers/harness.js';

// Decision 0030: recording and reading definitions adds no round trip to a step. Shown with a count, not a
// time: on a redis-server of its own, watched with MONITOR, the API (config v1) starts runs and a worker on
// config v2 (the agent's instructions changed) runs them, 5 iterations and 4 tool calls each. Every command
// that reads a definition key is counted, per hash: a worker reads a definition once per hash, whatever the
// number of runs and steps that use it. Pinned runs keep v1's definition (read once); `on_change: upgrade`
// runs move to v2 at their first iteration, which the worker's config serves without a read, after reading
// v1's once to decide.

const runs = 4;
const iterations = 5;
const replies = [
  ...Array.from({ length: iterations - 1 }, (_, index) => ({
    tool_calls: [{ name: 'add', arguments: { a: index, b: 1 } }],
  })),
  { text: 'done' },
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Every command sent to the Redis at `url` that names a definition key, counted by command and hash. Started
 * before any other client connects: a client's first commands (its ready check) arriving while MONITOR
 * starts could reach ioredis before it switched the connection to monitoring.
 */
async function watchDefinitionReads(url: string) {
  // No ready check on the watching connection either, for the same reason.
  const connection = new Redis(url, { enableReadyCheck: false });
  await connection.ping();
  const monitor = await connection.monitor();
  // A definition key (<prefix>:def:<hash>), not the record script's text that names it.
  const keyPattern = new RegExp(`${definitionKey({ prefix: '' }, '')}([0-9a-f]{32})$`);
  const reads = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // A script's commands (source `lua`) run inside Redis: not round trips (the record script's SET NX).
    if (source === 'lua') return;
    const hash = args
      .slice(1)
      .map((arg) => keyPattern.exec(String(arg))?.[1])
      .find((found) => found !== undefined);
    if (hash === undefined) return;
    // The record script is sent EVAL once, then EVALSHA: both are one write.
    const command = String(args[0]).toLowerCase();
    const kind = command === 'get' ? 'read' : command.startsWith('eval') ? 'record' : command;
    const name = `${kind} ${hash}`;
    reads.set(name, (reads.get(name) ?? 0) + 1);
  });
  cleanups.push(async () => {
    monitor.disconnect();
    connection.disconnect();
  });
  return reads;
}

async function countedRuns(onChange: 'pin' | 'upgrade') {
  const own: OwnRedis = await startRedisServer();
  cleanups.push(() => own.stop());
  const reads = await watchDefinitionReads(own.url);
  const h = new Harness({
    script: { replies },
    instructions: 'V1: add the numbers.',
    agent: { options: { max_iterations: 10, on_change: onChange } },
    redisUrl: own.url,
  });
  cleanups.push(() => h.close());
  const config = JSON.parse(readFileSync(h.configPath, 'utf8'));
  config.agents[0].instructions = 'V2: add the numbers, chattily.';
  const v2Path = join(h.dir, 'v2.json');
  writeFileSync(v2Path, JSON.stringify(config, null, 2));
  const loadedV2 = loadConfig(v2Path, { knownToolboxes: knownToolboxes([testToolbox(), altToolbox()]) });
  const v1Hash = definitionsOf(h.loaded.config).get('agent')?.hash;
  const v2Hash = definitionsOf(loadedV2.config).get('agent')?.hash;
  expect(v1Hash).toBeDefined();
  expect(v2Hash).not.toBe(v1Hash);

  const started = [];
  for (let index = 0; index < runs; index += 1)
    started.push(await h.engine.startRun({ input: `run ${index}`, agent: 'agent' }));
  const worker = new RatchetWorker({
    loaded: loadedV2,
    toolboxes: [testToolbox({ effectLog: h.effectLog }), altToolbox()],
    logger: silentLogger(),
  });
  cleanups.push(() => worker.close(2000));
  await worker.start();
  const done = [];
  for (const { runId } of started) done.push(await h.engine.waitForRun(runId, { timeoutMs: 120_000 }));
  for (const run of done) {
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.iteration).toBe(iterations);
  }
  // Every step of every run called the model or a tool: runs × (2 × iterations − 1) step jobs ran.
  expect(h.modelCalls()).toHaveLength(runs * iterations);
  return { h, done, reads, v1Hash: v1Hash as string, v2Hash: v2Hash as string, started };
}

describe('reading definitions costs a worker one read per hash, no step a round trip (decision 0030)', () => {
  it(`${runs} pinned runs of ${2 * iterations - 1} steps each on a worker whose config changed: one GET of the run's definition`, async () => {
    const { h, done, reads, v1Hash } = await countedRuns('pin');
    for (const run of done) expect(run.definition?.hash).toBe(v1Hash);
    // The worker worked under v1's definition: every model call was sent v1's instructions.
    for (const call of h.modelCalls()) expect(call.system).toContain('V1: add the numbers.');
    // The API recorded v1's definition once for its 4 runs; of the worker's 36 step jobs one read it, the
    // other 35 found it in the worker's memory.
    expect(Object.fromEntries(reads)).toEqual({ [`record ${v1Hash}`]: 1, [`read ${v1Hash}`]: 1 });
  }, 180_000);

  it(`${runs} upgraded runs: v1's definition read once to decide, v2's (the worker's own) never`, async () => {
    const { h, done, reads, v1Hash, v2Hash, started } = await countedRuns('upgrade');
    for (const run of done) expect(run.definition?.hash).toBe(v2Hash);
    for (const { sessionId } of started)
      expect((await eventKinds(h, sessionId)).filter((kind) => kind === 'agent_upgraded')).toHaveLength(1);
    for (const call of h.modelCalls()) expect(call.system).toContain('V2: add the numbers, chattily.');
    // The API recorded v1 once; the worker read v1 once (to decide) and recorded v2 once (before the first
    // upgrade's commit named it), for 4 runs and 36 steps.
    expect(Object.fromEntries(reads)).toEqual({
      [`record ${v1Hash}`]: 1,
      [`read ${v1Hash}`]: 1,
      [`record ${v2Hash}`]: 1,
    });
  }, 180_000);
});
