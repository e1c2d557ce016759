import type { ScheduleSpec } from '../../schemas/index.js';
import type { FireDecision } from '../schedule-record.js';

/** What a fire of a schedule is decided from: all read before the decision is recorded. */
export interface FireSituation {
  spec: Pick<ScheduleSpec, 'overlap' | 'catch_up' | 'missed_after_s'>;
  paused: boolean;
  fireAtMs: number;
  nowMs: number;
  /** The schedule's previous run, when it has one, and whether it is finished. */
  previous: { runId: string; finished: boolean } | undefined;
  /** The fire time of the fire waiting for the previous run (`overlap: queue`), when one waits. */
  queuedFireMs: number | undefined;
  /** The id the fire's run gets when it starts one (deterministic: scheduledRunIds). */
  runId: string;
}

/**
 * The pure decision of one fire (decision 0036). A paused schedule starts nothing. A fire taken up more than
 * `missed_after_s` after its time was missed while no process ran: `catch_up: none` skips it, `once` starts
 * it (BullMQ keeps one pending fire per schedule, so a long pause of every process leaves one such fire).
 * Then the overlap policy, while the previous run is unfinished: `skip` starts nothing, `queue` waits for
 * it (one fire at most: a fire that finds another waiting is skipped), `allow` starts anyway.
 */
export function decideFire(situation: FireSituation): FireDecision {
  const { spec, previous } = situation;
  if (situation.paused) return { kind: 'skip', reason: 'paused' };
  const late = situation.nowMs - situation.fireAtMs > spec.missed_after_s * 1000;
  // A fire already waiting (overlap: queue) was on time when it began to wait.
  const waiting = situation.queuedFireMs === situation.fireAtMs;
  if (late && !waiting && spec.catch_up === 'none') return { kind: 'skip', reason: 'missed' };
  const busy = previous !== undefined && !previous.finished;
  if (!busy || spec.overlap === 'allow') return { kind: 'run', runId: situation.runId };
  if (spec.overlap === 'skip') return { kind: 'skip', reason: 'overlap' };
  if (situation.queuedFireMs === undefined || waiting) return { kind: 'wait' };
  return { kind: 'skip', reason: 'queue_full' };
}
