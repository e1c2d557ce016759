import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { chatKey, sessionKeys } from '../../src/redis/keys.js';
import { sweepExpired } from '../../src/redis/retention.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// retention: finished runs and idle sessions are removed by a sweep, in batches; nothing an unfinished run
// needs is ever removed. Windows of a second or two, so the test waits for them to pass.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const toolLoop: Script = {
  rules: [
    {
      when: { contains: 'ask me' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
    },
  ],
  replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }],
  default: { text: 'done' },
};

/**
 * Keys of this test's prefix that hold per-run or per-session data, and their memory: not BullMQ's queue
 * bookkeeping (bounded by keep_completed_jobs_s and its stream lengths), the worker registry (one entry per
 * live worker process) nor the per-agent usage sums (one hash per agent and shard, kept for ever: bounded by
 * the config).
 */
async function ratchetKeys(h: Harness): Promise<{ keys: string[]; bytes: number }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await h.redis.scan(cursor, 'MATCH', `${h.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(
      ...batch.filter(
        (key) =>
          !key.includes(':steps:') &&
          !key.includes('{retention}') &&
          !key.includes('{workers}') &&
          !key.includes(':usage:agent:') &&
          // The deployment's, not a session's: the schedules' queue, the events sent to the deployment, the
          // webhook deliveries, and the agent definitions (one per definition, decision 0030).
          !key.includes('{schedules}') &&
          !key.includes('{events}') &&
          !key.includes('{webhooks}') &&
          !/:def:[0-9a-f]{32}$/.test(key),
      ),
    );
  } while (cursor !== '0');
  let bytes = 0;
  for (const key of keys) bytes += (await h.redis.memory('USAGE', key)) ?? 0;
  return { keys: keys.sort(), bytes };
}

function retentionHarness(retention: Record<string, number>) {
  return new Harness({
    script: toolLoop,
    worker: { keep_completed_jobs_s: 1 },
    config: { retention: { sweep_interval_s: 3600, ...retention } },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One sweep now, with the harness's retention settings. */
const sweep = (h: Harness) =>
  sweepExpired(h.redis, h.engine.space, h.loaded.config.retention, silentLogger());

describe('retention', () => {
  it('removes idle sessions whole, back to the empty baseline, and keeps a session whose run waits for an answer', async () => {
    harness = retentionHarness({ finished_runs_s: 1, idle_sessions_s: 2 });
    await harness.startWorker();
    const baseline = await ratchetKeys(harness);
    expect(baseline.keys).toEqual([]);

    // A session with two finished runs (a tool loop, then a short one).
    const first = await harness.engine.startRun({ input: 'add them' });
    expect((await harness.engine.waitForRun(first.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const second = await harness.engine.startRun({ input: 'again', sessionId: first.sessionId });
    expect((await harness.engine.waitForRun(second.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    // A session whose run waits for a person.
    const waiting = await harness.engine.startRun({ input: 'ask me something' });
    await waitFor(
      async () => (await harness?.engine.listQuestions(waiting.sessionId))?.length === 1,
      20_000,
      'the question',
    );
    const withWaiting = await ratchetKeys(harness);
    expect(withWaiting.bytes).toBeGreaterThan(0);

    await sleep(2_200);
    const swept = await sweep(harness);
    expect(swept.sessions).toBe(1);
    // Both runs of the idle session went first as finished runs (1 s), then the session (2 s); the waiting run's
    // session is busy.
    expect(swept.runs).toBe(2);

    const after = await ratchetKeys(harness);
    const waitingKeys = withWaiting.keys.filter(
      (key) => key.includes(waiting.sessionId.slice(4)) || key.includes(waiting.runId),
    );
    // Only the waiting session's keys are left (and the shard's indexes that list what is left).
    expect(after.keys.filter((key) => !key.includes(':retention:') && !key.includes(':run-index:'))).toEqual(
      waitingKeys.sort(),
    );
    // The run index lists only the waiting run: the expired runs left no trace in it.
    expect((await harness.engine.listRuns({ limit: 500 })).runs.map((run) => run.id)).toEqual([
      waiting.runId,
    ]);
    expect(await harness.engine.countRuns()).toMatchObject({ completed: 0, waiting_input: 1 });
    expect(await harness.engine.getSession(first.sessionId)).toBeUndefined();
    expect(await harness.engine.readChat(first.sessionId)).toEqual([]);

    // The waiting run goes on: answered, it completes; once finished and idle long enough, it goes too.
    const [question] = await harness.engine.listQuestions(waiting.sessionId);
    if (!question) throw new Error('no question');
    await harness.engine.respond(waiting.sessionId, question.id, 'this one');
    expect((await harness.engine.waitForRun(waiting.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    await sleep(2_200);
    await sweep(harness);
    const empty = await ratchetKeys(harness);
    expect(empty.keys).toEqual(baseline.keys);
    expect(empty.bytes).toBe(baseline.bytes);
  });

  it('lists a session created without a run, and removes it when it stays unused past idle_sessions_s', async () => {
    harness = retentionHarness({ finished_runs_s: 0, idle_sessions_s: 1 });
    const baseline = await ratchetKeys(harness);
    const session = await harness.engine.createSession();
    expect((await harness.engine.listSessions({ limit: 10 })).sessions.map((listed) => listed.id)).toEqual([
      session.id,
    ]);
    await sleep(1_200);
    expect((await sweep(harness)).sessions).toBe(1);
    expect(await harness.engine.getSession(session.id)).toBeUndefined();
    expect((await harness.engine.listSessions({ limit: 10 })).sessions).toEqual([]);
    expect((await ratchetKeys(harness)).keys).toEqual(baseline.keys);
  });

  it('removes finished runs after finished_runs_s while their session and its chat stay', async () => {
    harness = retentionHarness({ finished_runs_s: 1, idle_sessions_s: 0 });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add them' });
    await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    const chatBefore = await harness.engine.readChat(sessionId);
    await sleep(1_200);
    const swept = await sweep(harness);
    expect(swept).toEqual({ runs: 1, sessions: 0, kept: 0, skipped: 0 });
    expect(await harness.engine.getRun(runId)).toBeUndefined();
    expect(await harness.engine.readChat(sessionId)).toEqual(chatBefore);
    // The session takes new runs.
    const next = await harness.engine.startRun({ input: 'again', sessionId });
    expect((await harness.engine.waitForRun(next.runId, { timeoutMs: 20_000 })).status).toBe('completed');
  });

  it('keeps a finished child run while its root run is unfinished, and removes it with its chat after', async () => {
    harness = new Harness({
      agents: [
        {
          name: 'lead',
          script: {
            replies: [
              {
                tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find it' } }],
              },
              { tool_calls: [{ name: 'ask_user', arguments: { question: 'Keep it?' } }] },
              { text: 'kept' },
            ],
          },
        },
        { name: 'helper', script: { default: { text: 'found it' } } },
      ],
      config: { retention: { finished_runs_s: 1, idle_sessions_s: 0, sweep_interval_s: 3600 } },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go', agent: 'lead' });
    await waitFor(
      async () => (await harness?.engine.listQuestions(sessionId))?.length === 1,
      20_000,
      'the question',
    );
    const space = harness.engine.space;
    const childId = (await harness.redis.smembers(sessionKeys(space, sessionId).runs)).find(
      (id) => id !== runId,
    );
    const child = childId === undefined ? undefined : await harness.engine.getRun(childId);
    if (!child) throw new Error('no child run');
    const childChat = chatKey(space, sessionId, child.chat_id);
    expect(await harness.redis.exists(childChat)).toBe(1);
    await sleep(1_200);
    const kept = await sweep(harness);
    expect(kept).toEqual({ runs: 0, sessions: 0, kept: 1, skipped: 0 });
    expect(await harness.engine.getRun(child.id)).toBeDefined();

    const [question] = await harness.engine.listQuestions(sessionId);
    if (!question) throw new Error('no question');
    await harness.engine.respond(sessionId, question.id, 'yes');
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    await sleep(1_200);
    // Marked again when it was kept: due one window after that.
    const swept = await sweep(harness);
    expect(swept.runs).toBe(2);
    expect(await harness.engine.getRun(child.id)).toBeUndefined();
    expect(await harness.redis.exists(childChat)).toBe(0);
    expect((await harness.engine.readChat(sessionId)).length).toBeGreaterThan(0);
  });

  it('0 keeps everything; the scheduled sweep runs by itself on one of the workers', async () => {
    harness = retentionHarness({ finished_runs_s: 0, idle_sessions_s: 1, sweep_interval_s: 1 });
    await harness.startWorker();
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add them' });
    await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    await waitFor(
      async () =>
        (await ratchetKeys(harness as Harness)).keys.every((key) => !key.includes(sessionId.slice(4))),
      15_000,
      'the idle session to be swept',
    );
  });

  it('keeps BullMQ bounded: finished step jobs older than keep_completed_jobs_s are removed', async () => {
    harness = retentionHarness({ finished_runs_s: 0, idle_sessions_s: 0 });
    await harness.startWorker();
    const first = await harness.engine.startRun({ input: 'add them' });
    await harness.engine.waitForRun(first.runId, { timeoutMs: 20_000 });
    await sleep(1_200);
    const second = await harness.engine.startRun({ input: 'again' });
    await harness.engine.waitForRun(second.runId, { timeoutMs: 20_000 });
    const completed: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await harness.redis.scan(
        cursor,
        'MATCH',
        `${harness.prefix}:*:steps:completed`,
        'COUNT',
        1000,
      );
      cursor = next;
      for (const key of batch) completed.push(...(await harness.redis.zrange(key, 0, -1)));
    } while (cursor !== '0');
    // Only the second run's jobs are left: the first run's were removed when later jobs completed.
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.every((jobId) => jobId.startsWith(second.runId))).toBe(true);
  });
});
