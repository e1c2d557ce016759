/**
 * `npm run chaos`: the chaos mix (test/chaos/chaos.ts) at full size, and its summary table.
 * Options (environment): CHAOS_RUNS (default 200), CHAOS_WORKERS (3), CHAOS_KILL_EVERY_MS (1000),
 * CHAOS_TIMEOUT_S (600), CHAOS_SEED (random; printed), CHAOS_LOCK_MS (10000) and CHAOS_STALLED_MS (2000): the
 * worker lock settings (the defaults of the worker config), CHAOS_MODEL_DELAY_MS (500).
 * Exits 1 when anything was lost or duplicated, or a run did not complete.
 */
import { formatChaos, runChaos } from './chaos.js';

const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seed = number('CHAOS_SEED', Math.floor(Math.random() * 2 ** 31));
console.log(`chaos: seed ${seed} (replay with CHAOS_SEED=${seed})`);
const report = await runChaos({
  runs: number('CHAOS_RUNS', 200),
  workers: number('CHAOS_WORKERS', 3),
  killEveryMs: number('CHAOS_KILL_EVERY_MS', 1000),
  timeoutMs: number('CHAOS_TIMEOUT_S', 600) * 1000,
  restartRedis: process.env.CHAOS_RESTART_REDIS !== 'no',
  lockDurationMs: number('CHAOS_LOCK_MS', 10_000),
  stalledIntervalMs: number('CHAOS_STALLED_MS', 2_000),
  modelDelayMs: number('CHAOS_MODEL_DELAY_MS', 500),
  seed,
  log: (line) => console.log(`chaos: ${line}`),
});
console.log(formatChaos(report));
for (const failure of report.failures.slice(0, 20)) console.log(`  ✗ ${failure}`);
const clean =
  report.completed === report.runs &&
  report.lostMessages + report.duplicatedMessages + report.lostEvents + report.duplicatedEvents === 0 &&
  report.repeatedCalls === report.explainedRepeats;
process.exit(clean ? 0 : 1);
