import type { IterationStep, Run, RunSteps } from '../../client/index.js';
import { formatCost, formatCount, formatDuration } from '../format.js';
import { TableHead } from './table-head.js';
import { visibleText } from './text.js';

/** One drawn bar: what, where on the time axis, and its words for the tooltip. */
interface Bar {
  row: number;
  kind: 'model' | 'tool' | 'tool-error' | 'wait';
  from: number;
  to: number;
  title: string;
}

interface Mark {
  row: number;
  at: number;
  title: string;
}

const width = 1000;
const labelWidth = 190;
const rowHeight = 22;
const top = 24;

function time(iso: string | null | undefined): number | undefined {
  if (iso === null || iso === undefined) return undefined;
  const value = Date.parse(iso);
  return Number.isNaN(value) ? undefined : value;
}

/** Rows, bars and marks of the picture, from the journal's steps (nothing is measured in the page). */
function layout(steps: readonly IterationStep[], now: number) {
  const labels: string[] = [];
  const bars: Bar[] = [];
  const marks: Mark[] = [];
  for (const step of steps) {
    const row = labels.length;
    labels.push(`i${step.iteration} ${step.model ?? 'model'}`);
    const firstAttempt = step.attempts[0]?.started_at;
    const from = time(firstAttempt) ?? time(step.started_at);
    const to = time(step.finished_at) ?? (step.state === 'in_progress' ? now : undefined);
    const tokens = step.tokens === null ? '' : `, ${step.tokens.input} in / ${step.tokens.output} out tokens`;
    if (from !== undefined) {
      bars.push({
        row,
        kind: 'model',
        from,
        to: to ?? from,
        title: `iteration ${step.iteration}: ${step.decision ?? step.state}, ${formatDuration(step.duration_ms)}${tokens}, ${formatCost(step.cost_usd)}, ${step.model_calls} model call(s), ${step.attempts_total} execution(s)`,
      });
    }
    for (const attempt of step.attempts) {
      const at = time(attempt.started_at);
      if (at === undefined || attempt.cause === 'first') continue;
      marks.push({
        row,
        at,
        title: `execution ${attempt.execution} (${attempt.cause}${attempt.retry_of === null ? '' : ` after ${attempt.retry_of}`}) on worker ${attempt.worker}`,
      });
    }
    for (const wait of step.waits) {
      const waitFrom = time(wait.started_at);
      if (waitFrom === undefined) continue;
      bars.push({
        row,
        kind: 'wait',
        from: waitFrom,
        to: time(wait.ended_at) ?? now,
        title: `wait (${wait.kind}): ${formatDuration(wait.duration_ms)}`,
      });
    }
    for (const call of step.tool_calls) {
      const callRow = labels.length;
      labels.push(`  ${call.name ?? 'tool'}`);
      const callFrom = time(call.started_at);
      if (callFrom !== undefined) {
        bars.push({
          row: callRow,
          kind: call.is_error === true ? 'tool-error' : 'tool',
          from: callFrom,
          to: time(call.finished_at) ?? now,
          title: `${call.name ?? 'tool'}: ${call.ledger}${call.is_error === true ? ', error' : ''}, ${formatDuration(call.duration_ms)}, ${call.attempts_total} execution(s)`,
        });
      }
      for (const wait of call.waits) {
        const waitFrom = time(wait.started_at);
        if (waitFrom === undefined) continue;
        bars.push({
          row: callRow,
          kind: 'wait',
          from: waitFrom,
          to: time(wait.ended_at) ?? now,
          title: `wait (${wait.kind}${wait.status === null ? '' : `, ${wait.status}`}): ${formatDuration(wait.duration_ms)}`,
        });
      }
      for (const attempt of call.attempts) {
        const at = time(attempt.started_at);
        if (at === undefined || attempt.cause === 'first') continue;
        marks.push({ row: callRow, at, title: `execution ${attempt.execution} (${attempt.cause})` });
      }
    }
  }
  return { labels, bars, marks };
}

/**
 * The run's steps on a time axis (model calls, tool calls, waits; executions after a retry or a takeover
 * marked), and the same facts as a table with tokens and cost per iteration, a row for each summary call
 * (a compaction), and the total, which is the run's own usage unless the page says why not. Test ids:
 * timeline, timeline-svg, timeline-bar (data-kind), timeline-attempt, steps-table, step-row-<n>,
 * step-summary-<n>, steps-total, steps-differ.
 */
export function StepTimeline({ steps, run }: { steps: RunSteps; run: Run }) {
  const now = Date.now();
  const { labels, bars, marks } = layout(steps.steps, now);
  const times = [...bars.flatMap((bar) => [bar.from, bar.to]), ...marks.map((mark) => mark.at)];
  const start = times.length === 0 ? now : Math.min(...times);
  const end = times.length === 0 ? now : Math.max(...times);
  const span = Math.max(end - start, 1);
  const x = (at: number) => labelWidth + ((at - start) / span) * (width - labelWidth - 10);
  const height = top + Math.max(labels.length, 1) * rowHeight + 8;
  const ticks = [0, 0.25, 0.5, 0.75, 1];

  let tokensIn = 0;
  let tokensOut = 0;
  let cost = 0;
  for (const step of steps.steps) {
    tokensIn += (step.tokens?.input ?? 0) + (step.compaction?.tokens?.input ?? 0);
    tokensOut += (step.tokens?.output ?? 0) + (step.compaction?.tokens?.output ?? 0);
    cost += (step.cost_usd ?? 0) + (step.compaction?.cost_usd ?? 0);
  }
  const differs = tokensIn !== run.usage.input_tokens || tokensOut !== run.usage.output_tokens;

  return (
    <div class="timeline" data-testid="timeline">
      <ul class="legend" aria-hidden="true">
        <li>
          <span class="swatch swatch-model" />
          model call
        </li>
        <li>
          <span class="swatch swatch-tool" />
          tool call
        </li>
        <li>
          <span class="swatch swatch-wait" />
          wait
        </li>
        <li>
          <span class="swatch swatch-attempt" />
          another execution (retry, takeover, wake)
        </li>
      </ul>
      {/* At a narrow width the picture keeps a readable size and scrolls sideways; focusable, so the keyboard
          can scroll it (axe: scrollable-region-focusable). */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to be scrolled by keyboard */}
      <section class="timeline-scroll" aria-label="Step timeline picture" tabIndex={0}>
        <svg
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={`Step timeline: ${steps.steps.length} iterations over ${formatDuration(end - start)}; the table below has the same facts`}
          data-testid="timeline-svg"
        >
          {ticks.map((tick) => (
            <g key={tick}>
              <line
                class="axis"
                x1={x(start + tick * span)}
                x2={x(start + tick * span)}
                y1={top - 6}
                y2={height - 4}
              />
              <text
                x={x(start + tick * span)}
                y={14}
                text-anchor={tick === 1 ? 'end' : tick === 0 ? 'start' : 'middle'}
              >
                {formatDuration(tick * span)}
              </text>
            </g>
          ))}
          {labels.map((label, row) => (
            <text key={`label-${row}-${label}`} x={4} y={top + row * rowHeight + 15}>
              {visibleText(label.length > 28 ? `${label.slice(0, 27)}…` : label)}
            </text>
          ))}
          {bars.map((bar, index) => (
            <rect
              key={`bar-${index}-${bar.row}`}
              class={`bar-${bar.kind}`}
              x={x(bar.from)}
              y={top + bar.row * rowHeight + (bar.kind === 'wait' ? 9 : 3)}
              width={Math.max(x(bar.to) - x(bar.from), 2)}
              height={bar.kind === 'wait' ? 6 : 16}
              rx={2}
              data-testid="timeline-bar"
              data-kind={bar.kind}
            >
              <title>{visibleText(bar.title)}</title>
            </rect>
          ))}
          {marks.map((mark, index) => (
            <path
              key={`mark-${index}-${mark.row}`}
              class="mark-attempt"
              d={`M ${x(mark.at)} ${top + mark.row * rowHeight + 1} l 5 -6 l -10 0 z`}
              data-testid="timeline-attempt"
            >
              <title>{visibleText(mark.title)}</title>
            </path>
          ))}
        </svg>
      </section>
      {steps.next_from !== null && <p class="muted">The first {steps.steps.length} iterations are shown.</p>}
      <div class="table-scroll">
        <table data-testid="steps-table">
          <caption class="visually-hidden">Iterations with tokens and cost</caption>
          <TableHead
            columns={[
              { label: 'Iteration' },
              { label: 'Model' },
              { label: 'Decision' },
              { label: 'Tool calls' },
              { label: 'Executions' },
              { label: 'Duration', numeric: true },
              { label: 'Tokens in', numeric: true },
              { label: 'Tokens out', numeric: true },
              { label: 'Cost', numeric: true },
            ]}
          />
          <tbody>
            {steps.steps.map((step) => [
              step.compaction !== null && (
                <tr
                  key={`summary-${step.iteration}`}
                  class="summary-row"
                  data-testid={`step-summary-${step.iteration}`}
                >
                  <td>{step.iteration}</td>
                  <td>{visibleText(step.model ?? '–')}</td>
                  <td>summary of the chat up to entry {step.compaction.up_to} (compaction)</td>
                  <td>–</td>
                  <td>{step.summary_calls}</td>
                  <td class="number">–</td>
                  <td class="number">{formatCount(step.compaction.tokens?.input)}</td>
                  <td class="number">{formatCount(step.compaction.tokens?.output)}</td>
                  <td class="number">{formatCost(step.compaction.cost_usd)}</td>
                </tr>
              ),
              <tr key={step.iteration} data-testid={`step-row-${step.iteration}`}>
                <td>{step.iteration}</td>
                <td>{visibleText(step.model ?? '–')}</td>
                <td>{step.decision ?? step.state}</td>
                <td>
                  {step.tool_calls.length === 0
                    ? '–'
                    : step.tool_calls
                        .map(
                          (call) =>
                            `${call.name ?? 'tool'}${call.ledger === 'done' ? '' : ` (${call.ledger})`}`,
                        )
                        .map(visibleText)
                        .join(', ')}
                </td>
                <td>
                  {step.attempts_total}
                  {step.attempts.some((attempt) => attempt.cause !== 'first') &&
                    ` (${step.attempts
                      .filter((attempt) => attempt.cause !== 'first')
                      .map((attempt) => attempt.cause)
                      .join(', ')})`}
                </td>
                <td class="number">{formatDuration(step.duration_ms)}</td>
                <td class="number">{formatCount(step.tokens?.input)}</td>
                <td class="number">{formatCount(step.tokens?.output)}</td>
                <td class="number">{formatCost(step.cost_usd)}</td>
              </tr>,
            ])}
          </tbody>
          <tfoot>
            <tr data-testid="steps-total">
              <th scope="row" colspan={6}>
                Total
              </th>
              <td class="number">{formatCount(tokensIn)}</td>
              <td class="number">{formatCount(tokensOut)}</td>
              <td class="number">{formatCost(cost)}</td>
            </tr>
          </tfoot>
        </table>
      </div>
      {differs && (
        <p class="muted" data-testid="steps-differ">
          The run's own tokens above ({formatCount(run.usage.input_tokens)} in /{' '}
          {formatCount(run.usage.output_tokens)} out) are not these rows' total:{' '}
          {steps.next_from !== null
            ? `only the first ${steps.steps.length} iterations are shown here.`
            : run.origin?.kind === 'retry'
              ? 'a retry carries over the usage of the run it continues, whose iterations are on that run’s page.'
              : 'some model calls have no row here (a summary recorded before Ratchet kept its usage).'}
        </p>
      )}
    </div>
  );
}
