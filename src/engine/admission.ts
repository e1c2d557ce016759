import { shardOf } from '../redis/keys.js';
import { isFinished, type RunPage, sessionIdOfRun, stepJobId } from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';

/** How long one process holds the sweep (a sweep takes a round trip per 100 active runs, plus releases). */
const sweepLockMs = 30_000;

/**
 * The safety net of fair admission (decision 0038): a root run's end releases its slot after the run's final
 * commit, and the cancellation of a queued run removes it from the queue; a process that dies in between
 * leaves the slot taken. The sweep releases every admitted run that is finished or gone, on one process at a
 * time (a lock with an expiry), and wakes the first step of every admitted run not started whose step still
 * waits parked or in the queued runs' lane (its wake-up lost, decision 0053). Returns how many it released.
 */
export async function sweepAdmission(parts: EngineParts): Promise<number> {
  const admission = parts.admission;
  if (!admission) return 0;
  if (!(await admission.holdSweep(sweepLockMs))) return 0;
  let released = 0;
  try {
    const active = await admission.activeRuns();
    for (let start = 0; start < active.length; start += 100) {
      const batch = active.slice(start, start + 100);
      const records = await Promise.all(
        batch.map(async (run) => {
          const sessionId = sessionIdOfRun(run.id);
          return sessionId ? parts.store.loadRun(sessionId, run.id) : undefined;
        }),
      );
      for (const [index, run] of batch.entries()) {
        const stored = records[index];
        if (stored?.record.status === 'queued') {
          // Admitted, not started: its wake-up may have died with a process (decision 0053).
          const sessionId = stored.record.session_id;
          await parts.queues.wakeStalledAdmitted(
            shardOf(parts.space, sessionId),
            stepJobId.iteration(run.id, 1),
          );
          continue;
        }
        if (stored && !isFinished(stored.record.status)) continue;
        await admission.release(run);
        released += 1;
      }
    }
  } finally {
    await admission.releaseSweep();
  }
  if (released > 0) parts.options.logger.info({ released }, 'admission slots of ended runs released');
  return released;
}

/**
 * A page of runs with why each queued root run waits (GET /v1/runs, as GET /v1/runs/:id shows it): one
 * pipeline over the admission keys for the page's queued root runs, none when the page has none.
 */
export async function withQueuedReasons(parts: EngineParts, page: RunPage): Promise<RunPage> {
  const queued = page.runs.flatMap((run) =>
    run.status === 'queued' && run.root_run_id === null && run.tenant !== null
      ? [{ id: run.id, tenant: run.tenant }]
      : [],
  );
  if (!parts.admission || queued.length === 0) return page;
  const reasons = await parts.admission.queuedReasons(queued);
  return { ...page, runs: page.runs.map((run) => ({ ...run, queued_reason: reasons.get(run.id) ?? null })) };
}
