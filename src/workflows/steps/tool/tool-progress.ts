import { RatchetError } from '../../../errors/index.js';
import { buildEvent } from '../../../events/event.js';
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
 * fenced: the run's `progress` and a progress event. A report with `data` (decision 0049), bounded as
 * `report_progress`'s, then merges it into the run's `partial_results`, once too (`partial:<job>:<n>`): a
 * handler that runs again after a crash reports under the same fields and adds nothing twice.
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
    const report = sequence++;
    const code = await context.store.reportProgress(
      journalField.progress(context.jobId, report),
      JSON.stringify(value),
      event,
    );
    if (code === 'LOCK_LOST')
      throw new RatchetError('lock_lost', 'reporting progress: the job lock was lost');
    if (partial !== undefined)
      await mergeData(context, data, journalField.partialResults(context.jobId, report), now, partial);
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
 * The report's data merged into the run's partial results, once (its own journal field, `partial:<job>:<n>`):
 * a commit of the run record as read (`expectedRev`), so a call of the same batch that merged in between
 * moves it, and the data is merged again on what that call wrote.
 */
async function mergeData(
  context: StepContext,
  data: ToolJobData,
  field: string,
  now: string,
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
        journal: { v: 1, at: now },
        record: { ...record, partial_results: mergeReport(record.partial_results, partial), updated_at: now },
        messages: [],
        events: [],
        finished: false,
      },
    });
    // `done`: an earlier execution of the handler merged this report's data.
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
