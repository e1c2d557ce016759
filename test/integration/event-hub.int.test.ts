import { afterEach, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import { Harness } from '../helpers/harness.js';

/**
 * The event hub's wake-ups, through the engine's followEvents: a follower that starts waiting while the
 * hub's read is blocked on other streams is woken without waiting for that read's block time (5 s), and
 * two followers of one stream at different positions each get exactly what comes after their own.
 */

let harness: Harness | undefined;
const controllers: AbortController[] = [];
afterEach(async () => {
  for (const controller of controllers.splice(0)) controller.abort();
  await harness?.close();
  harness = undefined;
});

function collect(engine: Harness['engine'], sessionId: string, after?: string) {
  const controller = new AbortController();
  controllers.push(controller);
  const received: RatchetEvent[] = [];
  const done = (async () => {
    for await (const event of engine.followEvents(sessionId, {
      ...(after === undefined ? {} : { after }),
      signal: controller.signal,
    })) {
      received.push(event);
    }
  })();
  return { received, done, stop: () => controller.abort() };
}

async function until(check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

it('wakes a follower that joins while the read is blocked on another stream, long before the block time', async () => {
  harness = new Harness({ script: { replies: [{ text: 'x' }] } });
  const { engine } = harness;
  const quiet = await engine.createSession();
  const busy = await engine.createSession();
  collect(engine, quiet.id);
  // The hub's read now blocks on the quiet session only.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const follower = collect(engine, busy.id);
  await new Promise((resolve) => setTimeout(resolve, 100));
  await engine.startRun({ input: 'go', sessionId: busy.id });
  const elapsed = await until(() => follower.received.length > 0, 4_000);
  expect(elapsed).toBeLessThan(4_000);
  expect(follower.received[0]?.kind).toBe('run_started');
});

it('followers of one stream at different positions each get exactly what follows their own position', async () => {
  harness = new Harness({ script: { replies: [{ text: 'x' }] } });
  const { engine } = harness;
  const session = await engine.createSession();
  const first = await engine.startRun({ input: 'one', sessionId: session.id });
  await engine.cancelRun(first.runId);
  const before = await engine.readEvents(session.id);
  const middle = before[0]?.id;
  expect(middle).toBeDefined();

  const fromStart = collect(engine, session.id);
  const fromMiddle = collect(engine, session.id, middle);
  const fromNow = collect(engine, session.id, before.at(-1)?.id);
  await until(() => fromStart.received.length === before.length, 30_000);

  const second = await engine.startRun({ input: 'two', sessionId: session.id });
  await engine.cancelRun(second.runId);
  const log = await engine.readEvents(session.id);
  await until(() => fromStart.received.length === log.length, 30_000);
  await until(() => fromNow.received.length === log.length - before.length, 30_000);
  await until(() => fromMiddle.received.length === log.length - 1, 30_000);

  expect(fromStart.received.map((event) => event.id)).toEqual(log.map((event) => event.id));
  expect(fromMiddle.received.map((event) => event.id)).toEqual(log.slice(1).map((event) => event.id));
  expect(fromNow.received.map((event) => event.id)).toEqual(
    log.slice(before.length).map((event) => event.id),
  );
  for (const follower of [fromStart, fromMiddle, fromNow]) {
    follower.stop();
    await follower.done;
  }
});
