import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { silentLogger } from '../../src/log/index.js';
import { eventBusKeys, runKeys } from '../../src/redis/keys.js';
import { sweepExpired } from '../../src/redis/retention.js';
import { publishEvent } from '../../src/redis/wait-store.js';
import { stepJobId } from '../../src/workflows/ids.js';
import { journalField } from '../../src/workflows/journal.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

// Waits under faults: a worker SIGKILLed at the crash points of a wait (after the delivery is recorded, before
// and after the call's outcome commit, at the wake-up), a sleep across a SIGKILL, a Redis restarted (AOF)
// between the wait and the event, and an API that recorded an event but died before waking anyone.

let harness: Harness | undefined;
let ownRedis: OwnRedis | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await ownRedis?.stop();
  ownRedis = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function start(options: HarnessOptions): Harness {
  harness = new Harness({
    ...options,
    worker: { question_recheck_ms: 60_000, ...options.worker },
    agent: { toolboxes: ['test', 'waits'], ...options.agent },
  });
  return harness;
}

const waitScript = {
  replies: [
    { tool_calls: [{ id: 'wait', name: 'wait_for_event', arguments: { event: 'deploy', timeout_s: 120 } }] },
    { text: 'deployed' },
  ],
};

function toolResults(chat: readonly Message[], id: string) {
  return chat.flatMap((message) => toolResultsOf(message).filter((result) => result.tool_call_id === id));
}

function ends(events: readonly RatchetEvent[], id: string) {
  return events.filter((event) => event.kind === 'tool_call_end' && event.data.tool_call_id === id);
}

async function waiters(h: Harness, event: string): Promise<number> {
  return h.redis.zcard(eventBusKeys(h.engine.space).waiters(event));
}

/** The wait's result is in the chat once, with the payload, and the run made no model call it did not need. */
async function expectReceivedOnce(h: Harness, runId: string, sessionId: string, kills: number) {
  expect((await h.engine.waitForRun(runId, { timeoutMs: 60_000 })).status).toBe('completed');
  const results = toolResults(await h.transcript(sessionId), 'wait');
  expect(results).toHaveLength(1);
  expect(JSON.parse(results[0]?.content ?? '')).toMatchObject({
    received: true,
    id: 'deploy-1',
    payload: { version: 7 },
  });
  expect(ends(await h.events(sessionId), 'wait')).toHaveLength(1);
  expect(h.modelCalls().length).toBeLessThanOrEqual(2 + kills);
}

describe('a wait under a worker SIGKILL', () => {
  for (const point of ['tool.before_commit', 'tool.after_commit', 'tool.mid_call@2']) {
    it(`at ${point}: the event is received once`, async () => {
      // A wake-up the loaded machine delays is caught by the recheck within 2 s, not the default's.
      const h = start({ script: waitScript, worker: { question_recheck_ms: 2_000 } });
      const first = h.spawnWorker({ crashAt: point });
      const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the deploy' });
      await waitFor(async () => (await waiters(h, 'deploy')) === 1, 30_000, 'the wait to be listed');
      // Parked, not only listed: an event sent between the listing and the step's own look is received by
      // the first execution, which then never runs the call a second time (tool.mid_call@2 is never reached).
      const toolJob = stepJobId.tool(runId, 1, 0);
      const queue = h.engine.queues.queue(0);
      await waitFor(async () => (await queue.getJobState(toolJob)) === 'delayed', 30_000, 'the wait to park');
      await h.engine.sendEvent({ event: 'deploy', payload: { version: 7 }, id: 'deploy-1' });
      const exit = await waitForExit(first, 60_000);
      expect(exit.signal).toBe('SIGKILL');
      h.spawnWorker();
      await expectReceivedOnce(h, runId, sessionId, 1);
    }, 120_000);
  }

  it('an event recorded by an API that died before waking anyone is found by the recheck', async () => {
    const h = start({ script: waitScript, worker: { question_recheck_ms: 500 } });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the deploy' });
    await waitFor(async () => (await waiters(h, 'deploy')) === 1, 20_000, 'the wait to park');
    // What POST /v1/events records, without the wake-ups that follow it.
    const now = Date.now();
    await publishEvent(h.redis, h.engine.space, {
      id: 'deploy-1',
      event: 'deploy',
      entryJson: JSON.stringify({
        v: 1,
        id: 'deploy-1',
        event: 'deploy',
        payload: { version: 7 },
        at: new Date(now).toISOString(),
        expires_ms: now + 3_600_000,
      }),
      nowMs: now,
      retentionMs: 3_600_000,
      maxKept: 1000,
    });
    await expectReceivedOnce(h, runId, sessionId, 0);
  });
});

describe('sleep', () => {
  it('sleeps 2 s across a worker SIGKILL and wakes once', async () => {
    const h = start({
      script: {
        replies: [
          { tool_calls: [{ id: 'nap', name: 'sleep', arguments: { seconds: 2 } }] },
          { text: 'rested' },
        ],
      },
    });
    const first = h.spawnWorker();
    const started = Date.now();
    const { runId, sessionId } = await h.engine.startRun({ input: 'sleep a little' });
    const keys = runKeys(h.engine.space, sessionId, runId);
    const parked = journalField.parked(stepJobId.tool(runId, 1, 0));
    await waitFor(
      async () => (await h.redis.hexists(keys.journal, parked)) === 1,
      20_000,
      'the sleep to park',
    );
    // The run's view says it sleeps, and until when.
    const [sleeping] = (await h.engine.getRun(runId))?.waiting ?? [];
    expect(sleeping).toMatchObject({ kind: 'sleep', event: null });
    expect(Date.parse(sleeping?.until ?? '') - Date.parse(sleeping?.since ?? '')).toBeCloseTo(2000, -2);
    await first.kill();
    h.spawnWorker();
    expect((await h.engine.waitForRun(runId, { timeoutMs: 60_000 })).status).toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    const results = toolResults(await h.transcript(sessionId), 'nap');
    expect(results).toHaveLength(1);
    const result = JSON.parse(results[0]?.content ?? '') as {
      slept: boolean;
      woke_at: string;
      until: string;
    };
    expect(result.slept).toBe(true);
    expect(Date.parse(result.woke_at)).toBeGreaterThanOrEqual(Date.parse(result.until));
    expect(ends(await h.events(sessionId), 'nap')).toHaveLength(1);
    expect(h.modelCalls()).toHaveLength(2);
  }, 90_000);

  it("refuses to sleep past the run's deadline, and a sleep without seconds or until", async () => {
    const h = start({
      script: {
        replies: [
          {
            tool_calls: [
              { id: 'long', name: 'sleep', arguments: { seconds: 600 } },
              { id: 'neither', name: 'sleep', arguments: {} },
            ],
          },
          {
            tool_calls: [{ id: 'then', name: 'wait_for_event', arguments: { event: 'then', timeout_s: 20 } }],
          },
          { text: 'awake' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'sleep long', timeoutS: 30 });
    await waitFor(async () => (await waiters(h, 'then')) === 1, 20_000, 'the wait after the sleeps');
    // The refused sleep is not shown as one: the run waits for the event only.
    expect((await h.engine.getRun(runId))?.waiting).toEqual([
      { kind: 'event', event: 'then', since: expect.any(String), until: expect.any(String) },
    ]);
    await h.engine.sendEvent({ event: 'then' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const chat = await h.transcript(sessionId);
    const [long] = toolResults(chat, 'long');
    expect(long?.is_error).toBe(true);
    expect(long?.content).toMatch(/the run's deadline is .*: a sleep may not end after it/);
    const [neither] = toolResults(chat, 'neither');
    expect(neither?.is_error).toBe(true);
    expect(neither?.content).toMatch(/give either seconds or until/);
  });
});

describe('a Redis restart (AOF)', () => {
  it('between the wait and the event loses nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ratchet-aof-'));
    ownRedis = await startRedisServer({ appendOnly: true, dir });
    const h = start({ script: waitScript, redisUrl: ownRedis.url });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the deploy' });
    await waitFor(async () => (await waiters(h, 'deploy')) === 1, 20_000, 'the wait to park');
    await ownRedis.stop();
    ownRedis = await startRedisServer({ appendOnly: true, dir, port: ownRedis.port });
    // The engine's connection comes back on its own; a client sends again until the event is acknowledged.
    let sent = false;
    await waitFor(
      async () => {
        sent ||= await h.engine
          .sendEvent({ event: 'deploy', payload: { version: 7 }, id: 'deploy-1' })
          .then(() => true)
          .catch(() => false);
        return sent;
      },
      30_000,
      'the event to be accepted',
    );
    await expectReceivedOnce(h, runId, sessionId, 0);
  }, 90_000);
});

describe('retention', () => {
  it("removes a finished run's waits and signals with it", async () => {
    const h = start({
      script: waitScript,
      config: { retention: { finished_runs_s: 1, idle_sessions_s: 0, sweep_interval_s: 3600 } },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the deploy' });
    await waitFor(async () => (await waiters(h, 'deploy')) === 1, 20_000, 'the wait to park');
    await h.engine.signalRun(runId, { event: 'deploy', payload: { version: 7 }, id: 'deploy-1' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const keys = runKeys(h.engine.space, sessionId, runId);
    expect(await h.redis.exists(keys.waits, keys.signals)).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const swept = await sweepExpired(h.redis, h.engine.space, h.loaded.config.retention, silentLogger());
    expect(swept.runs).toBe(1);
    expect(await h.redis.exists(keys.waits, keys.signals, keys.run)).toBe(0);
  });
});
