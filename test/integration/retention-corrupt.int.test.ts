import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { sweepExpired } from '../../src/redis/retention.js';
import { Harness } from '../helpers/harness.js';

// A record the sweep cannot read (here: a deadline past year 9999, as an unbounded timeout_s once stored)
// is skipped, logged and counted; the sweep goes on to the sessions and runs after it, in every batch size.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rewrites a run's stored record with a deadline its schema refuses. */
async function corruptRun(h: Harness, sessionId: string, runId: string): Promise<void> {
  const key = runKeys(h.engine.space, sessionId, runId).run;
  const record = JSON.parse((await h.redis.hget(key, 'record')) ?? '{}');
  await h.redis.hset(
    key,
    'record',
    JSON.stringify({ ...record, deadline_at: '+033658-09-27T01:46:40.000Z' }),
  );
}

async function finishedRuns(h: Harness, count: number) {
  const runs: { runId: string; sessionId: string }[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = await h.engine.startRun({ input: `run ${index}` });
    expect((await h.engine.waitForRun(started.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    runs.push(started);
  }
  return runs;
}

function logLines() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { lines, logger };
}

describe('retention with a record it cannot read', () => {
  it.each([100, 1])(
    'skips, logs and counts a corrupt session and still removes the idle sessions after it (batch_size %i)',
    async (batchSize) => {
      harness = new Harness({
        script: { default: { text: 'done' } },
        config: {
          retention: {
            sweep_interval_s: 3600,
            finished_runs_s: 0,
            idle_sessions_s: 1,
            batch_size: batchSize,
          },
        },
      });
      await harness.startWorker();
      const [corrupt, ...later] = await finishedRuns(harness, 3);
      if (!corrupt) throw new Error('no run');
      await corruptRun(harness, corrupt.sessionId, corrupt.runId);
      await sleep(1_200);
      const { lines, logger } = logLines();
      const swept = await sweepExpired(
        harness.redis,
        harness.engine.space,
        harness.loaded.config.retention,
        logger,
      );
      expect(swept).toEqual({ runs: 0, sessions: 2, kept: 0, skipped: 1 });
      for (const { sessionId } of later) expect(await harness.engine.getSession(sessionId)).toBeUndefined();
      // The corrupt session is left as it is (never silently removed), and said so in the log.
      expect(
        await harness.redis.exists(runKeys(harness.engine.space, corrupt.sessionId, corrupt.runId).run),
      ).toBe(1);
      const skipped = lines.filter((line) => line.msg === 'retention: skipped an entry it cannot handle');
      expect(skipped).toEqual([
        expect.objectContaining({ level: 50, entry: expect.stringContaining(corrupt.sessionId) }),
      ]);
      expect(lines).toContainEqual(expect.objectContaining({ sessions: 2, skipped: 1 }));
      // The next sweep finds it again, and only it.
      expect(
        await sweepExpired(harness.redis, harness.engine.space, harness.loaded.config.retention, logger),
      ).toEqual({
        runs: 0,
        sessions: 0,
        kept: 0,
        skipped: 1,
      });
    },
  );

  it.each([100, 1])(
    'skips a corrupt finished run and still removes the finished runs after it (batch_size %i)',
    async (batchSize) => {
      harness = new Harness({
        script: { default: { text: 'done' } },
        config: {
          retention: {
            sweep_interval_s: 3600,
            finished_runs_s: 1,
            idle_sessions_s: 0,
            batch_size: batchSize,
          },
        },
      });
      await harness.startWorker();
      const [corrupt, ...later] = await finishedRuns(harness, 3);
      if (!corrupt) throw new Error('no run');
      await corruptRun(harness, corrupt.sessionId, corrupt.runId);
      await sleep(1_200);
      const { logger } = logLines();
      const swept = await sweepExpired(
        harness.redis,
        harness.engine.space,
        harness.loaded.config.retention,
        logger,
      );
      expect(swept).toEqual({ runs: 2, sessions: 0, kept: 0, skipped: 1 });
      for (const { sessionId, runId } of later) {
        expect(await harness.redis.exists(runKeys(harness.engine.space, sessionId, runId).run)).toBe(0);
      }
    },
  );
});
