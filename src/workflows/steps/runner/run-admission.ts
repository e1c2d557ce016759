import type { RunRecord } from '../../run-record.js';

/**
 * Fair admission of root runs (decision 0038), the port the steps use: a root run's first step asks for its
 * admission before it starts, and parks while the run is queued; a root run's end frees its slot.
 */
export interface RunAdmission {
  /** How long a queued run's first step stays parked before it checks again (a lost wake-up's safety net). */
  readonly recheckMs: number;
  /**
   * Admits the run or queues it (idempotent, from any process). Every run this call admits has its first
   * step woken, the run's own too unless `wakeSelf` is false (its step is the caller). `starting`: the run's
   * own first step asks, about to start; an admitted run whose tenant holds more than its share while another
   * tenant waits under its own then yields its slot and is queued again (decision 0048).
   */
  admit(run: AdmissionCandidate, options?: { wakeSelf?: boolean; starting?: boolean }): Promise<boolean>;
  /** Whether the run is admitted (its first step's recheck). */
  isAdmitted(runId: string): Promise<boolean>;
  /** Frees the run's slot (or its place in the queue) and admits and wakes the runs that fit now. */
  release(run: Pick<RunRecord, 'id' | 'tenant'>): Promise<void>;
}

export type AdmissionCandidate = Pick<RunRecord, 'id' | 'tenant' | 'priority' | 'created_at'>;

/** A root run that has not started is admitted before its first step goes on. */
export function awaitsAdmission(record: RunRecord): boolean {
  return record.status === 'queued' && record.parent === null;
}
