import { afterEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../bench/tcp-proxy.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { killTheCaller, started } from '../helpers/generations.js';
import { Harness, type WorkerProcess } from '../helpers/harness.js';
import { configThrough, redisTarget } from '../helpers/proxied-worker.js';

// Decision 0045: a SIGKILLed worker process's connections close at once and Redis stops listing its named
// connection, so survivors take its steps over within `worker.dead_connection_ms` (300 ms) rather than when
// its heartbeat expires. The proofs wait on events, not on a stopwatch: the lock is ten minutes, so only the
// watch can explain a takeover, and its log says which signal it went by. A live worker whose connection is
// cut once, or whose network stalls for a second, is not taken over; one cut off for longer is, by its
// heartbeat, and its late commit is fenced out.
let harness: Harness | undefined;
const openProxies: TcpProxy[] = [];
afterEach(async () => {
  for (const proxy of openProxies) proxy.resume();
  await harness?.close();
  harness = undefined;
  await Promise.all(openProxies.splice(0).map((proxy) => proxy.close()));
});

const longLock = { lock_duration_ms: 600_000, stalled_interval_ms: 2_000 };
const byConnection = 'a worker process has no connection to Redis left';
const byHeartbeat = 'a worker process stopped beating its heartbeat';
const takenOver = 'a worker process died: its steps were released';

/** Closes, from Redis's side, every connection by the name the worker process `pid` registered. */
async function closeConnectionsOf(h: Harness, pid: number): Promise<number> {
  const entries = Object.values(await h.redis.hgetall(`${h.prefix}:{workers}:registry`)).map(
    (json) => JSON.parse(json) as { pid: number; connection_name?: string },
  );
  const name = entries.find((entry) => entry.pid === pid)?.connection_name;
  if (!name) throw new Error(`no registry entry names the connection of pid ${pid}`);
  const listing = String(await h.redis.call('CLIENT', 'LIST', 'TYPE', 'normal'));
  const ids = listing
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
  for (const id of ids) await h.redis.call('CLIENT', 'KILL', 'ID', id);
  return ids.length;
}

/** Two worker processes, each reaching Redis through a proxy of its own; a run whose call one of them holds. */
async function twoWorkersBehindProxies(h: Harness) {
  const proxies = await Promise.all([0, 1].map(() => TcpProxy.start({ target: redisTarget(h) })));
  openProxies.push(...proxies);
  const workers = proxies.map((entry, index) =>
    h.spawnWorker({ configPath: configThrough(h, entry.url, `through-proxy-${index}.json`) }),
  );
  await started(...workers);
  const { runId } = await h.engine.startRun({ input: 'go' });
  await waitFor(() => h.modelCalls().length === 1, 60_000, 'the model call');
  const holderIndex = workers.findIndex((worker) => worker.child.pid === h.modelCalls()[0]?.pid);
  if (holderIndex < 0) throw new Error('the model call came from neither worker');
  return {
    runId,
    holder: { worker: workers[holderIndex] as WorkerProcess, proxy: proxies[holderIndex] as TcpProxy },
    other: workers[1 - holderIndex] as WorkerProcess,
    output: () => workers.map((worker) => worker.output()).join('\n'),
  };
}

describe('dead worker processes noticed by their connections', () => {
  it('takes over a SIGKILLed worker as soon as its connections are gone, long before its heartbeat expires', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'finally', delay_ms: 4_000 }] },
      // A minute of heartbeat: only the connection check can explain a takeover within the test.
      worker: { ...longLock, concurrency: 1, dead_worker_ms: 60_000 },
    });
    harness = h;
    const workers = [h.spawnWorker(), h.spawnWorker()];
    await started(...workers);
    const { runId } = await h.engine.startRun({ input: 'go' });
    const survivor = await killTheCaller(h, workers, 30_000);
    // The released job wakes the survivor's fetch at once (BullMQ's marker), so its model call can be seen
    // before its log lines have come through the pipe: wait for them rather than read the output once.
    await waitFor(() => survivor.output().includes(takenOver), 30_000, 'the takeover to be logged');
    expect(survivor.output()).toContain(byConnection);
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('finally');
  }, 180_000);

  it('does not take over a live worker whose connection Redis closes once (it reconnects at once)', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'still mine', delay_ms: 3_000 }] },
      worker: { ...longLock, concurrency: 1 },
    });
    harness = h;
    const workers = [h.spawnWorker(), h.spawnWorker()];
    await started(...workers);
    const { runId } = await h.engine.startRun({ input: 'go' });
    await waitFor(() => h.modelCalls().length === 1, 60_000, 'the model call');
    // The holder's named connection, closed by Redis (as CLIENT KILL or a restarted proxy would close it).
    expect(await closeConnectionsOf(h, h.modelCalls()[0]?.pid as number)).toBeGreaterThan(0);
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('still mine');
    expect(h.modelCalls()).toHaveLength(1);
    const output = workers.map((worker) => worker.output()).join('\n');
    expect(output).not.toContain(byConnection);
    expect(output).not.toContain(takenOver);
  }, 180_000);

  it('does not take over a live worker whose network stalls for a second', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'still mine', delay_ms: 4_000 }] },
      worker: { ...longLock, concurrency: 1 },
    });
    harness = h;
    const { runId, holder, output } = await twoWorkersBehindProxies(h);
    // Nothing passes for a second, the connections stay open (Redis still lists them); then it flows again.
    holder.proxy.pause();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    holder.proxy.resume();
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('still mine');
    expect(h.modelCalls()).toHaveLength(1);
    expect(output()).not.toContain(takenOver);
  }, 180_000);

  it('takes over a partitioned worker by its heartbeat, and fences out its late commit', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'finally', delay_ms: 3_000 }] },
      worker: { ...longLock, concurrency: 1 },
    });
    harness = h;
    const { runId, holder, other, output } = await twoWorkersBehindProxies(h);
    // A partition: the holder's connections stay open (no close reaches Redis), nothing passes.
    holder.proxy.pause();
    await waitFor(() => h.modelCalls().length === 2, 60_000, 'the other worker to call the model again');
    expect(h.modelCalls()[1]?.pid).toBe(other.child.pid);
    expect(other.output()).toContain(byHeartbeat);
    expect(output()).not.toContain(byConnection);
    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    // The partition heals: the zombie's reply arrives and its commit is refused (its lock token is gone).
    holder.proxy.resume();
    await waitFor(
      () => holder.worker.output().includes('lost the job lock'),
      60_000,
      'the zombie to find its lock gone',
    );
    const chat = await h.transcript(run.session_id);
    expect(chat.filter((message) => message.role === 'assistant')).toHaveLength(1);
    expect((await h.engine.getRun(runId))?.result).toBe('finally');
  }, 180_000);
});
