import { expect, it } from 'vitest';
import { formatChaos, runChaos } from '../chaos/chaos.js';

// The short version of `npm run chaos`: a mix of runs through the HTTP API (tool loops, a delegation, parallel
// spawns, a question answered, a long run that compacts) while worker processes are SIGKILLed and replaced and
// Redis is killed and restarted on its AOF once. Short locks, so takeovers are quick; the full run, with the
// default worker settings, is in docs/reliability.md.
it('a mix of runs survives worker kills and a Redis restart: nothing lost, duplicated or repeated unexplained', async () => {
  const seed = Number(process.env.RATCHET_CHAOS_SEED ?? 20261124);
  const report = await runChaos({
    runs: 10,
    workers: 2,
    killEveryMs: 1500,
    timeoutMs: 120_000,
    restartRedis: true,
    lockDurationMs: 2000,
    stalledIntervalMs: 1000,
    // Long enough model calls that kills and the Redis restart land in runs, even on a busy machine.
    modelDelayMs: 800,
    seed,
  });
  const table = `${formatChaos(report)}\n${report.failures.join('\n')}`;
  // In the log whatever happens, so a failure in CI says what it was.
  console.log(table);
  expect(report.failures, table).toEqual([]);
  expect(report.completed, table).toBe(report.runs);
  expect(report.kills, table).toBeGreaterThan(0);
  expect(report.redisRestarts, table).toBe(1);
  expect(report.lostMessages + report.duplicatedMessages, table).toBe(0);
  expect(report.lostEvents + report.duplicatedEvents, table).toBe(0);
  expect(report.repeatedCalls, table).toBe(report.explainedRepeats);
}, 180_000);
