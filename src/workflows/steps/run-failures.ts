import { RatchetError, withoutSecrets } from '../../errors/index.js';
import { buildEvent } from '../../events/event.js';
import { wakeParentStep } from '../child-runs.js';
import { failureCommit } from '../core/run-commits.js';
import { journalField } from '../journal.js';
import { isFinished } from '../run-record.js';
import type { CommitResult } from '../store.js';
import type { StepContext } from './step-context.js';

interface RunRef {
  session_id: string;
  run_id: string;
}

/** Throws when a commit was refused because this worker no longer owns the job. */
export function ensureOwned(result: CommitResult, what: string): void {
  if (result.status === 'lock_lost') {
    throw new RatchetError('lock_lost', `${what}: the job's lock was lost; another worker owns it now`);
  }
}

/** Ends the run as failed with the error recorded (once, even when called again). */
export async function failRun(context: StepContext, ref: RunRef, error: RatchetError): Promise<void> {
  const { services } = context;
  const stored = await context.store.loadRun();
  if (!stored || isFinished(stored.record.status)) return;
  const plan = failureCommit(
    stored.record,
    { code: error.code, message: withoutSecrets(error).message },
    services.now().toISOString(),
  );
  const result = await context.store.commit({
    journalField: journalField.runFailed(),
    plan,
  });
  ensureOwned(result, `failing run ${ref.run_id}`);
  await wakeParentStep(services.scheduler, stored.record);
}

/** Records a failed attempt as an `error` event, once per attempt. */
export async function announceAttemptFailure(
  context: StepContext,
  ref: RunRef & { step: string },
  error: RatchetError,
  retryInMs: number | null,
): Promise<void> {
  const { services } = context;
  const stored = await context.store.loadRun();
  if (!stored || isFinished(stored.record.status)) return;
  const now = services.now().toISOString();
  const event = buildEvent(
    'error',
    stored.record,
    {
      step: ref.step,
      attempt: context.attempt,
      code: error.code,
      message: withoutSecrets(error).message,
      final: retryInMs === null,
      retry_in_ms: retryInMs,
    },
    now,
  );
  await context.store.commit({
    journalField: journalField.attemptFailed(context.jobId, context.attempt),
    plan: { journal: { v: 1, at: now }, record: undefined, messages: [], events: [event], finished: false },
  });
}
