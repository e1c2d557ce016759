import { type RatchetError, withoutSecrets } from '../../../errors/index.js';
import { buildEvent } from '../../../events/event.js';
import { failureCommit } from '../../core/run-commits.js';
import { journalField } from '../../journal.js';
import { isFinished } from '../../run-record.js';
import { commit, done, type StepAction, wakeParent } from './step-action.js';
import type { StepContext } from './step-context.js';

interface RunRef {
  session_id: string;
  run_id: string;
}

/** Ends the run as failed with the error recorded (once, even when called again), and wakes its parent. */
export async function failRun(context: StepContext, ref: RunRef, error: RatchetError): Promise<StepAction> {
  const { services } = context;
  const stored = await context.store.loadRun();
  if (!stored || isFinished(stored.record.status)) return done;
  const plan = failureCommit(
    stored.record,
    { code: error.code, message: withoutSecrets(error).message },
    services.now().toISOString(),
  );
  return commit(
    { op: 'run', request: { journalField: journalField.runFailed(), plan } },
    {
      what: `failing run ${ref.run_id}`,
      andThen: async () => {
        // Its questions can no longer be answered: they leave the session's list.
        await context.store.closeQuestionsOfRun();
        return wakeParent(stored.record);
      },
    },
  );
}

/** Records a failed attempt as an `error` event, once per attempt. */
export async function announceAttemptFailure(
  context: StepContext,
  ref: RunRef & { step: string },
  error: RatchetError,
  retryInMs: number | null,
): Promise<StepAction> {
  const { services } = context;
  const stored = await context.store.loadRun();
  if (!stored || isFinished(stored.record.status)) return done;
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
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.attemptFailed(context.jobId, context.attempt),
        plan: {
          journal: { v: 1, at: now, code: error.code },
          record: undefined,
          messages: [],
          events: [event],
          finished: false,
        },
      },
    },
    { what: `announcing a failed attempt of ${ref.run_id}`, andThen: () => done },
  );
}
