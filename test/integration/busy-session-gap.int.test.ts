import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { runIdOfPendingMessage } from '../../src/workflows/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// The gap (decision 0040): a run ended with messages queued; the session has no active run until a worker's
// look (every 250 ms) starts the first queued message. Whatever arrives then must wait behind the queue.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const script: Script = {
  rules: [
    {
      when: { role: 'user', contains: 'work' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 400 } }],
      },
    },
  ],
  default: { text: 'done' },
};

function gapHarness(): Harness {
  harness = new Harness({ script, agent: { options: { max_iterations: 10, max_queued_messages: 25 } } });
  return harness;
}

function space(h: Harness) {
  return { prefix: h.prefix, shards: h.loaded.config.redis.shards };
}

describe('a message in the gap between a run and the next queued one', () => {
  it('waits behind the queue whatever its policy, and a reject or a retry is refused', async () => {
    const h = gapHarness();
    const { id: sessionId } = await h.engine.createSession({});
    // No worker: the session stays in the gap for as long as the test looks.
    const first = await h.engine.sendMessage({ sessionId, input: 'first' });
    const queued = await h.engine.sendMessage({ sessionId, input: 'queued 1', onBusy: 'queue' });
    await h.engine.cancelRun(first.runId);
    expect(await h.redis.hget(sessionKeys(space(h), sessionId).session, 'active_run')).toBeNull();

    await expect(h.engine.sendMessage({ sessionId, input: 'rejected' })).rejects.toMatchObject({
      code: 'session_busy',
      details: { active_run_id: null, queued_messages: 1 },
    });
    await expect(h.engine.retryRun(first.runId)).rejects.toMatchObject({ code: 'session_busy' });
    const steered = await h.engine.sendMessage({ sessionId, input: 'steered 2', onBusy: 'steer' });
    const interrupting = await h.engine.sendMessage({ sessionId, input: 'interrupt 3', onBusy: 'interrupt' });
    expect(steered).toMatchObject({ delivery: 'queued', position: 1 });
    expect(interrupting).toMatchObject({ delivery: 'queued', position: 2 });
    expect((await h.engine.getSession(sessionId))?.queued_messages?.map((message) => message.id)).toEqual([
      (queued as { messageId: string }).messageId,
      (steered as { messageId: string }).messageId,
      (interrupting as { messageId: string }).messageId,
    ]);

    await h.startWorker();
    await waitFor(
      async () => (await h.engine.getRun(interrupting.runId))?.status === 'completed',
      30_000,
      'the last queued run',
    );
    const started = (await h.events(sessionId)).filter((event) => event.kind === 'run_started');
    expect(started.map((event) => event.run_id)).toEqual([
      first.runId,
      queued.runId,
      steered.runId,
      interrupting.runId,
    ]);
    const users = (await h.transcript(sessionId)).filter((message) => message.role === 'user').map(textOf);
    expect(users).toEqual(['first', 'queued 1', 'steered 2', 'interrupt 3']);
  });

  it('racing sends at the moment a run ends never start ahead of the queued message (looped)', async () => {
    const h = gapHarness();
    await h.startWorker();
    const rounds = 6;
    let inGap = 0;
    for (let round = 0; round < rounds; round += 1) {
      const { id: sessionId } = await h.engine.createSession({});
      const sessionKey = sessionKeys(space(h), sessionId).session;
      const first = await h.engine.sendMessage({ sessionId, input: 'work' });
      const queued = await h.engine.sendMessage({ sessionId, input: 'queued', onBusy: 'queue' });
      expect(queued.runId).toBe(
        runIdOfPendingMessage(sessionId, (queued as { messageId: string }).messageId),
      );
      // The moment the run's end releases the session: a tight look at its active run.
      await waitFor(
        async () => (await h.redis.hget(sessionKey, 'active_run')) !== first.runId,
        30_000,
        'the run to end',
      );
      if ((await h.redis.hget(sessionKey, 'active_run')) === null) inGap += 1;
      const racing = await Promise.allSettled(
        (['reject', 'steer', 'interrupt', 'queue'] as const).map((onBusy) =>
          h.engine.sendMessage({ sessionId, input: `racing ${onBusy}`, onBusy }),
        ),
      );
      for (const outcome of racing) {
        if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'session_busy' });
      }
      await waitFor(
        async () => {
          const session = await h.engine.getSession(sessionId);
          if (!session || (session.queued_messages ?? []).length > 0) return false;
          if (await h.redis.hget(sessionKey, 'active_run')) return false;
          const page = await h.engine.listRuns({ sessionId, root: true, limit: 50 });
          return page.runs.every((run) => ['completed', 'failed', 'cancelled'].includes(run.status));
        },
        30_000,
        'every run of the round to end',
      );
      // The queued message's run is the first after the one that ended; nothing started in between.
      const started = (await h.events(sessionId)).filter((event) => event.kind === 'run_started');
      expect(started.slice(0, 2).map((event) => event.run_id)).toEqual([first.runId, queued.runId]);
      const users = (await h.transcript(sessionId)).filter((message) => message.role === 'user').map(textOf);
      expect(users.slice(0, 2)).toEqual(['work', 'queued']);
    }
    // The looks at the moment of the end found the gap (the session released, the next run not yet started).
    expect(inGap).toBeGreaterThan(0);
  });
});
