import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { keySlot } from '../../src/redis/connection.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { spawnCli } from '../cli/cli-fixture.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness, type HarnessOptions, type WorkerProcess } from '../helpers/harness.js';
import { type LocalCluster, startLocalCluster } from '../helpers/local-cluster.js';

// A worker process sent SIGTERM exits 0, says so in its log, and does it within worker.shutdown_timeout_ms
// plus a margin, whatever it is doing: starting, idle, running a slow model call, holding only a parked run,
// or with its Redis (or one cluster master) frozen. The margin is a correctness bound, not a speed target: it
// is generous because the machine may be busy; a worker that hangs on an unreachable Redis never makes it.
const shutdownTimeoutMs = 1_000;
const marginMs = 8_000;

let harness: Harness | undefined;
let redis: OwnRedis | undefined;
let cluster: LocalCluster | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  // A frozen Redis is woken first: the harness deletes its keys through it.
  redis?.process.kill('SIGCONT');
  for (let index = 0; index < (cluster?.ports.length ?? 0); index += 1) cluster?.signalNode(index, 'SIGCONT');
  await harness?.close();
  await redis?.stop();
  await cluster?.stop();
  harness = undefined;
  redis = undefined;
  cluster = undefined;
});

function testHarness(options: HarnessOptions): Harness {
  harness = new Harness({
    ...options,
    worker: { shutdown_timeout_ms: shutdownTimeoutMs, ...options.worker },
  });
  return harness;
}

const slowScript: Script = { replies: [{ text: 'too slow to wait for', delay_ms: 120_000 }] };

async function started(worker: WorkerProcess): Promise<void> {
  await waitFor(() => worker.output().includes('worker started'), 30_000, 'the worker to start');
}

/** SIGTERM, then: exit code 0 (not the signal), a shutdown line in the log, within the deadline + margin. */
async function expectCleanExitOnSigterm(worker: WorkerProcess): Promise<void> {
  worker.child.kill('SIGTERM');
  const exit = await waitForExit(worker, shutdownTimeoutMs + marginMs);
  expect(exit, worker.output()).toEqual({ code: 0, signal: null });
  expect(worker.output()).toMatch(/"signal":"SIGTERM".*"msg":"stopping worker"/);
  expect(worker.output()).toContain('"msg":"worker closed"');
}

describe('a worker sent SIGTERM exits 0 in time', () => {
  it('during start-up, at its first log line (before config, Redis and BullMQ workers)', async () => {
    const h = testHarness({ script: { replies: [{ text: 'never asked' }] } });
    const worker = h.spawnWorker();
    await waitFor(() => worker.output().includes('\n'), 30_000, 'the first log line');
    await expectCleanExitOnSigterm(worker);
    expect(worker.output()).not.toContain('worker started');
  });

  it('during start-up through `ratchet worker`, at its first log line', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-sigterm-'));
    const configPath = join(dir, 'ratchet.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        providers: [{ name: 'model', kind: 'scripted', model: 'm', replies: [{ text: 'never asked' }] }],
        agents: [{ name: 'agent', provider: 'model', toolboxes: ['utils'] }],
        redis: { url: inject('redisUrl'), prefix: `t-${randomBytes(6).toString('hex')}` },
        worker: { shutdown_timeout_ms: shutdownTimeoutMs },
      }),
    );
    const cli = spawnCli(['worker', '--config', configPath], { env: { RATCHET_LOG_LEVEL: 'info' } });
    try {
      await cli.waitFor('\n', 60_000);
      cli.child.kill('SIGTERM');
      const code = await Promise.race([
        cli.exited,
        new Promise((resolve) => setTimeout(resolve, shutdownTimeoutMs + marginMs, 'no exit')),
      ]);
      expect(code, cli.stdout() + cli.stderr()).toBe(0);
      expect(cli.stdout()).toMatch(/"signal":"SIGTERM".*"msg":"stopping worker"/);
      expect(cli.stdout()).not.toContain('worker started');
    } finally {
      await cli.kill();
    }
  });

  it('during start-up while its Redis refuses connections', async () => {
    redis = await startRedisServer();
    const h = testHarness({ script: { replies: [{ text: 'never asked' }] }, redisUrl: redis.url });
    const port = redis.port;
    await redis.stop();
    const worker = h.spawnWorker();
    await waitFor(() => worker.output().includes('ECONNREFUSED'), 30_000, 'a refused connection');
    await expectCleanExitOnSigterm(worker);
    expect(worker.output()).not.toContain('worker started');
    // Back on its port, so the harness can delete its keys.
    redis = await startRedisServer({ port });
  });

  it('idle', async () => {
    const worker = testHarness({ script: { replies: [{ text: 'never asked' }] } }).spawnWorker();
    await started(worker);
    await expectCleanExitOnSigterm(worker);
  });

  it('busy in a model call that outlives the deadline: the step is handed back to the queue', async () => {
    const h = testHarness({ script: slowScript });
    const { runId } = await h.engine.startRun({ input: 'slow' });
    const worker = h.spawnWorker();
    await waitFor(() => h.modelCalls().length === 1, 30_000, 'the model call to start');
    await expectCleanExitOnSigterm(worker);
    expect(worker.output()).toContain('step handed back to the queue');
    // Back in the queue for the next worker, not held as active until its lock expires.
    const counts = await h.engine.queues.queue(0).getJobCounts('active', 'delayed', 'wait');
    expect(counts).toMatchObject({ active: 0 });
    expect((counts.delayed ?? 0) + (counts.wait ?? 0)).toBe(1);
    expect((await h.engine.getRun(runId))?.status).not.toMatch(/completed|failed|cancelled/);
  });

  it('holding only a parked run (a question waiting for its answer), which stays parked', async () => {
    const h = testHarness({
      script: {
        replies: [
          { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
          { text: 'thanks' },
        ],
      },
    });
    const { runId } = await h.engine.startRun({ input: 'paint it' });
    const worker = h.spawnWorker();
    await waitFor(
      async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
      30_000,
      'the question',
    );
    await expectCleanExitOnSigterm(worker);
    const run = await h.engine.getRun(runId);
    expect(run?.status).toBe('waiting_input');
    const jobState = await h.engine.queues.queue(0).getJobState(run?.pending_question?.job_id ?? '');
    expect(jobState).toBe('delayed');
  });

  it('busy, with its Redis frozen (SIGSTOP): it logs that the step lock will expire instead', async () => {
    redis = await startRedisServer();
    const h = testHarness({ script: slowScript, redisUrl: redis.url });
    await h.engine.startRun({ input: 'slow' });
    const worker = h.spawnWorker();
    await waitFor(() => h.modelCalls().length === 1, 30_000, 'the model call to start');
    redis.process.kill('SIGSTOP');
    await expectCleanExitOnSigterm(worker);
    expect(worker.output()).toContain('shutdown deadline passed with Redis unreachable');
  });

  it('idle, with its Redis killed', async () => {
    redis = await startRedisServer();
    const h = testHarness({ script: { replies: [{ text: 'never asked' }] }, redisUrl: redis.url });
    const worker = h.spawnWorker();
    await started(worker);
    const port = redis.port;
    await redis.stop();
    // The process's one line for the outage (its connections' errors are counted in it, not logged each).
    await waitFor(() => worker.output().includes('Redis is unreachable'), 30_000, 'the worker to notice');
    await expectCleanExitOnSigterm(worker);
    redis = await startRedisServer({ port });
  });

  it('busy on a Redis Cluster with the master of its run frozen (SIGSTOP)', async () => {
    cluster = await startLocalCluster(3);
    const h = testHarness({
      script: slowScript,
      config: { redis: { cluster_nodes: cluster.nodes, prefix: 'sigterm', shards: 3 } },
    });
    const { sessionId } = await h.engine.startRun({ input: 'slow' });
    const worker = h.spawnWorker();
    await waitFor(() => h.modelCalls().length === 1, 30_000, 'the model call to start');
    const slot = keySlot(sessionKeys(h.engine.space, sessionId).session);
    const slots = (await h.redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const port = slots.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    cluster.signalNode(cluster.ports.indexOf(port ?? -1), 'SIGSTOP');
    await expectCleanExitOnSigterm(worker);
  }, 120_000);
});
