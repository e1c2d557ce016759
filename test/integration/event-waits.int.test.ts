import { afterEach, describe, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import { eventBusKeys, runKeys } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

// wait_for_event and signals end to end: a worker, a scripted model, events sent through the engine (what
// POST /v1/events and POST /v1/runs/:id/signal call). The recheck is far away, so only a wake-up (or the
// look back) can end a wait in time.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function start(options: HarnessOptions): Harness {
  harness = new Harness({
    worker: { question_recheck_ms: 60_000, ...options.worker },
    ...options,
    agent: { toolboxes: ['test', 'waits'], ...options.agent },
  });
  return harness;
}

function waitCall(id: string, args: Record<string, unknown>) {
  return { tool_calls: [{ id, name: 'wait_for_event', arguments: args }] };
}

/** The parsed result of each tool call of a chat, by call id. */
function results(chat: readonly Message[]): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const message of chat)
    for (const result of toolResultsOf(message)) found.set(result.tool_call_id, JSON.parse(result.content));
  return found;
}

async function waiters(h: Harness, event: string): Promise<number> {
  return h.redis.zcard(eventBusKeys(h.engine.space).waiters(event));
}

describe('wait_for_event', () => {
  it('parks until an event whose payload contains the match comes; others are passed over', async () => {
    const h = start({
      script: {
        replies: [
          waitCall('wait', { event: 'payment.settled', match: { order: { id: 42 } }, timeout_s: 120 }),
          { text: 'paid' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the payment' });
    await waitFor(async () => (await waiters(h, 'payment.settled')) === 1, 20_000, 'the wait to park');
    // The run's view says what it waits for and until when.
    const view = await h.engine.getRun(runId);
    expect(view?.waiting).toEqual([
      { kind: 'event', event: 'payment.settled', since: expect.any(String), until: expect.any(String) },
    ]);
    const [wait] = view?.waiting ?? [];
    expect(Date.parse(wait?.until ?? '') - Date.parse(wait?.since ?? '')).toBeCloseTo(120_000, -2);

    const other = await h.engine.sendEvent({
      event: 'payment.settled',
      payload: { order: { id: 41 }, amount: 5 },
    });
    expect(other).toMatchObject({ duplicate: false, woken: 1, runs: [] });
    const mine = await h.engine.sendEvent({
      event: 'payment.settled',
      payload: { order: { id: 42, lines: 3 }, amount: 7 },
      id: 'pay-42',
    });
    expect(mine).toMatchObject({ id: 'pay-42', duplicate: false });

    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(results(await h.transcript(sessionId)).get('wait')).toEqual({
      received: true,
      event: 'payment.settled',
      id: 'pay-42',
      source: 'event',
      sent_at: expect.any(String),
      payload: { order: { id: 42, lines: 3 }, amount: 7 },
    });
    // One model call before the wait and one after: none while it waited.
    expect(h.modelCalls()).toHaveLength(2);
    expect(await waiters(h, 'payment.settled')).toBe(0);
    expect((await h.engine.getRun(runId))?.waiting).toEqual([]);
  });

  it('receives an event sent a second before the wait starts (the wait looks back)', async () => {
    const h = start({
      script: { replies: [waitCall('wait', { event: 'build.done', timeout_s: 60 }), { text: 'built' }] },
    });
    await h.engine.sendEvent({ event: 'build.done', payload: { sha: 'abc' }, id: 'build-1' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for the build' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(results(await h.transcript(sessionId)).get('wait')).toMatchObject({
      received: true,
      id: 'build-1',
      payload: { sha: 'abc' },
    });
  });

  it('looks back past a page of events that do not match (kept events are read a page at a time)', async () => {
    const h = start({
      script: {
        replies: [
          waitCall('wait', { event: 'job.done', match: { job: 'mine' }, timeout_s: 60 }),
          { text: 'ok' },
        ],
      },
    });
    for (let index = 0; index < 250; index += 1)
      await h.engine.sendEvent({ event: 'job.done', payload: { job: `other-${index}` } });
    await h.engine.sendEvent({ event: 'job.done', payload: { job: 'mine', n: 1 }, id: 'mine-1' });
    await h.engine.sendEvent({ event: 'job.done', payload: { job: 'mine', n: 2 }, id: 'mine-2' });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for my job' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    // The oldest that fits.
    expect(results(await h.transcript(sessionId)).get('wait')).toMatchObject({
      id: 'mine-1',
      payload: { n: 1 },
    });
  });

  it('an event id sent twice delivers once: a second wait of the run times out', async () => {
    const h = start({
      worker: { question_recheck_ms: 100 },
      script: {
        replies: [
          waitCall('first', { event: 'mail.reply', timeout_s: 60 }),
          waitCall('second', { event: 'mail.reply', timeout_s: 1 }),
          { text: 'done' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait twice' });
    await waitFor(async () => (await waiters(h, 'mail.reply')) === 1, 20_000, 'the first wait to park');
    const sent = await h.engine.sendEvent({ event: 'mail.reply', payload: { n: 1 }, id: 'mail-1' });
    const again = await h.engine.sendEvent({ event: 'mail.reply', payload: { n: 2 }, id: 'mail-1' });
    expect(sent.duplicate).toBe(false);
    expect(again.duplicate).toBe(true);
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const found = results(await h.transcript(sessionId));
    expect(found.get('first')).toMatchObject({ received: true, id: 'mail-1', payload: { n: 1 } });
    expect(found.get('second')).toMatchObject({ received: false, timed_out: true });
    // The kept event it may not receive again did not wake it over and over: it looked about once per
    // recheck (100 ms) for its second.
    const steps = await h.engine.runSteps(runId, { from: 1, limit: 10, cutAt: 100 });
    const second = steps?.steps[1]?.tool_calls[0];
    expect(second?.name).toBe('wait_for_event');
    expect(second?.attempts_total).toBeLessThan(25);
  });

  it('a signal reaches the one run it is sent to, once per id', async () => {
    const h = start({
      script: {
        replies: [
          waitCall('wait', { event: 'approved', match: { by: 'ops' }, timeout_s: 120 }),
          waitCall('later', { event: 'approved', timeout_s: 1 }),
          { text: 'go' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for approval' });
    await waitFor(async () => (await waiters(h, 'approved')) === 1, 20_000, 'the wait to park');
    const sent = await h.engine.signalRun(runId, { event: 'approved', payload: { by: 'ops' }, id: 'sig-1' });
    expect(sent).toEqual({ id: 'sig-1', duplicate: false, woken: 1 });
    const again = await h.engine.signalRun(runId, { event: 'approved', payload: { by: 'ops' }, id: 'sig-1' });
    expect(again.duplicate).toBe(true);
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const found = results(await h.transcript(sessionId));
    expect(found.get('wait')).toMatchObject({ received: true, source: 'signal', id: 'sig-1' });
    // The signal was received once: the run's next wait does not get it again.
    expect(found.get('later')).toMatchObject({ received: false, timed_out: true });
    await expect(h.engine.signalRun(runId, { event: 'approved' })).rejects.toThrow(/already completed/);
    // The run's waits and signals go with its session.
    const keys = runKeys(h.engine.space, sessionId, runId);
    expect(await h.redis.exists(keys.waits, keys.signals)).toBe(2);
    expect(await h.engine.deleteSession(sessionId)).toBe(true);
    expect(await h.redis.exists(keys.waits, keys.signals)).toBe(0);
  });

  it('a parked run holds no worker slot: a worker of concurrency 1 runs another run meanwhile', async () => {
    const h = new Harness({
      worker: { concurrency: 1, question_recheck_ms: 60_000 },
      agents: [
        {
          name: 'waiter',
          toolboxes: ['waits'],
          script: { replies: [waitCall('wait', { event: 'go', timeout_s: 120 }), { text: 'went' }] },
        },
        { name: 'other', script: { replies: [{ text: 'other work done' }] } },
      ],
    });
    harness = h;
    await h.startWorker();
    const waiting = await h.engine.startRun({ agent: 'waiter', input: 'wait' });
    await waitFor(async () => (await waiters(h, 'go')) === 1, 20_000, 'the wait to park');
    const other = await h.engine.startRun({ agent: 'other', input: 'work' });
    expect((await h.engine.waitForRun(other.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect((await h.engine.getRun(waiting.runId))?.status).not.toBe('completed');
    await h.engine.sendEvent({ event: 'go', payload: {} });
    expect((await h.engine.waitForRun(waiting.runId, { timeoutMs: 20_000 })).status).toBe('completed');
  });

  it('one event reaches 100 parked runs', async () => {
    const h = start({
      script: { replies: [waitCall('wait', { event: 'release', timeout_s: 300 }), { text: 'released' }] },
    });
    await h.startWorker();
    const runs = await Promise.all(
      Array.from({ length: 100 }, (_unused, index) => h.engine.startRun({ input: `wait ${index}` })),
    );
    await waitFor(async () => (await waiters(h, 'release')) === 100, 60_000, '100 waits to park');
    const sent = await h.engine.sendEvent({ event: 'release', payload: { version: 3 }, id: 'release-3' });
    expect(sent.woken).toBe(100);
    for (const run of runs) {
      expect((await h.engine.waitForRun(run.runId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect(results(await h.transcript(run.sessionId)).get('wait')).toMatchObject({
        received: true,
        id: 'release-3',
        payload: { version: 3 },
      });
    }
  }, 120_000);
});
