import { RatchetError } from '../../../errors/index.js';
import { buildEvent, type StoredEvent } from '../../../events/event.js';
import { formatPath } from '../../../schemas/index.js';
import {
  type PartialResults,
  partialResultsSchema,
  progressProblem,
  type ToolContext,
} from '../../../tools/index.js';
import { mergeReport } from '../../core/partial-results.js';
import type { ToolJobData } from '../../job-data.js';
import { journalField } from '../../journal.js';
import type { StepContext } from '../runner/step-context.js';

/** Tries of a report with data against other writes of the run record (a batch's other calls reporting). */
const maxReportTries = 20;

/**
 * ToolContext.reportProgress: once per report (the n-th report of this step, journal `progress:<job>:<n>`),
 * fenced. A report with `data` (decision 0049) also merges it into the run's `partial_results`, bounded as
 * `report_progress`'s, in the same commit: a handler that runs again after a crash reports under the same
 * fields and adds nothing twice.
 */
export function progressFunction(context: StepContext, data: ToolJobData): ToolContext['reportProgress'] {
  let sequence = 0;
  return async ({ message, fraction, data: reported }) => {
    const problem = progressProblem({ message });
    if (problem !== undefined) throw new Error(`reportProgress: ${problem}`);
    const partial = reported === undefined ? undefined : checkedData(reported);
    const now = context.services.now().toISOString();
    const value = { fraction: fraction ?? null, message, at: now };
    const event = buildEvent(
      'progress',
      { id: data.run_id, agent: data.agent },
      { fraction: value.fraction, message },
      now,
    );
    const field = journalField.progress(context.jobId, sequence++);
    if (partial !== undefined) return reportWithData(context, data, field, value, event, partial);
    const code = await context.store.reportProgress(field, JSON.stringify(value), event);
    if (code === 'LOCK_LOST')
      throw new RatchetError('lock_lost', 'reporting progress: the job lock was lost');
  };
}

/** A tool's `data`, checked as `report_progress`'s: the handler gets the error, naming the field. */
function checkedData(reported: unknown): PartialResults {
  const parsed = partialResultsSchema.safeParse(reported);
  if (!parsed.success)
    throw new Error(
      `reportProgress: ${parsed.error.issues
        .map((issue) => `${formatPath(['data', ...issue.path])}: ${issue.message}`)
        .join('; ')}`,
    );
  return parsed.data;
}

/**
 * The report and its data in one commit of the run record, built on the record as read (`expectedRev`): a
 * call of the same batch that reported in between moves it, and the report is merged again on what it wrote.
 */
async function reportWithData(
  context: StepContext,
  data: ToolJobData,
  field: string,
  value: { fraction: number | null; message: string; at: string },
  event: StoredEvent,
  partial: PartialResults,
): Promise<void> {
  for (let tries = 0; tries < maxReportTries; tries += 1) {
    const [stored] = await context.store.loadRuns([data.run_id]);
    if (!stored) throw new RatchetError('cancelled', `reporting progress: the run ${data.run_id} is gone`);
    const { record } = stored;
    const result = await context.store.commit({
      journalField: field,
      expectedRev: stored.rev,
      plan: {
        journal: value,
        record: {
          ...record,
          partial_results: mergeReport(record.partial_results, partial),
          updated_at: value.at,
        },
        messages: [],
        events: [event],
        finished: false,
      },
    });
    // `done`: an earlier execution of the handler made this report (and merged its data).
    if (result.status === 'ok' || result.status === 'done') return;
    if (result.status === 'lock_lost')
      throw new RatchetError('lock_lost', 'reporting progress: the job lock was lost');
    if (result.status === 'run_finished' || result.status === 'no_run')
      throw new RatchetError('cancelled', `reporting progress: the run ${data.run_id} is finished`);
  }
  throw new RatchetError(
    'internal',
    `reporting progress: the run record of ${data.run_id} kept changing (${maxReportTries} tries)`,
    { retryable: true },
  );
}
