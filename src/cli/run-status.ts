import type { Run } from '../client/index.js';
import type { Invocation } from './invocation.js';
import { printable } from './terminal.js';

/** Run statuses after which nothing changes. */
export const finishedStatuses: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/**
 * `ratchet status`: what a person needs to know about a run, one fact a line; the commands it suggests start
 * with `invocation`.
 */
export function describeRun(run: Run, invocation: Invocation = 'ratchet'): string[] {
  const lines = [`run ${run.id} (session ${run.session_id})`, `  status      ${run.status}`];
  lines.push(`  agent       ${printable(run.agent)}`);
  if (run.parent_run_id) lines.push(`  parent      ${run.parent_run_id}`);
  // The lineage of retries and forks (decision 0022): what this run continues, and what continued it.
  const origin = run.origin;
  if (origin?.kind === 'retry') lines.push(`  retry of    ${origin.run_id}`);
  if (origin?.kind === 'fork') {
    lines.push(
      `  fork of     ${origin.run_id} at iteration ${origin.at_iteration ?? '?'} (session ${origin.session_id})`,
    );
  }
  if (run.retried_by) lines.push(`  retried by  ${run.retried_by}`);
  // No live worker has what a step of the run needs (decision 0031): name it, so an operator starts one.
  if (run.status === 'waiting_for_worker' && run.waiting_for) {
    lines.push(
      `  waiting for a worker with ${printable(run.waiting_for.missing.join(', '))} (since ${run.waiting_for.since})`,
    );
  }
  // Held back by fair admission (decision 0038): why, and how many of its tenant's runs go first.
  if (run.status === 'queued' && run.queued_reason)
    lines.push(`  queued      ${printable(run.queued_reason.message)}`);
  if (run.iterations !== undefined) lines.push(`  iterations  ${run.iterations}`);
  if (run.usage) {
    const cost = run.cost_usd ? `, $${run.cost_usd.toFixed(4)}` : '';
    lines.push(`  tokens      ${run.usage.input_tokens} in, ${run.usage.output_tokens} out${cost}`);
  }
  // A completed run's last report ("75% arithmetic done") is not where it stands; where a failed or cancelled
  // run got to is worth knowing, said as the past.
  if (run.progress && run.status !== 'completed') {
    const percent = run.progress.fraction === null ? '' : `${Math.round(run.progress.fraction * 100)}% `;
    const when = finishedStatuses.has(run.status)
      ? ` (when it ${run.status === 'failed' ? 'failed' : 'was cancelled'})`
      : '';
    lines.push(`  progress    ${percent}${printable(cut(run.progress.message))}${when}`);
  }
  if (run.created_at) lines.push(`  started     ${run.created_at}`);
  if (run.finished_at) lines.push(`  finished    ${run.finished_at}`);
  const question = run.pending_question;
  if (question) {
    const options = question.options.length > 0 ? ` [${question.options.map(printable).join(' / ')}]` : '';
    const what = question.kind === 'approval' ? `approve ${question.tool?.name ?? 'a tool call'}? ` : '';
    lines.push(`  question    ${what}${printable(cut(question.question))}${options}`);
    lines.push(
      `              answer with: ${invocation} answer ${question.id} "${question.kind === 'approval' ? 'approve' : '…'}"` +
        ` (or ${invocation} attach ${run.id})`,
    );
  }
  if (run.result !== undefined && run.result !== null) lines.push(`  answer      ${printable(run.result)}`);
  if (run.error) lines.push(`  error       ${run.error.code}: ${printable(run.error.message)}`);
  return lines;
}

function cut(text: string, length = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}
