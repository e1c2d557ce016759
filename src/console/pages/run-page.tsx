// The Run page (#/runs/<id>): what the run is (status, usage, lineage), its pending questions answerable in
// place, its actions (cancel, retry, fork at an iteration chosen in the transcript), the live tree of the run
// and its children, the transcript (the chat, then the session's events as they come), and the step
// timeline with tokens and cost. Polled every 2 s; the transcript follows the event stream.
//
// Test ids: run-page, run-status (data-status), run-facts, run-task, run-duration, run-tokens, run-cost,
// run-tokens-total, run-cost-total, run-definition, run-result, run-error, waiting-for-worker, retried-by, origin-link,
// parent-link, pending-questions, question (and QuestionForm's: answer-form, answer-input, answer-submit,
// approve, edit-arguments, edited-arguments, approve-edited, reject-reason, reject, budget-raise,
// budget-stop, answer-sent, answer-error), run-actions, cancel-run, retry-run, fork-form, fork-input,
// fork-run, fork-dismiss, action-error, message-box (MessageBox's: message-input, on-busy-<value>,
// send-message, message-sent, message-error), run-tree, tree-node-<id>, sub-goals, sub-goal, transcript, message
// (data-role, data-index), tool-call, tool-result, transcript-note (data-kind), streaming-text,
// running-call, fork-at-<n>, timeline, timeline-svg, timeline-bar (data-kind), timeline-attempt,
// steps-table, step-row-<n>, steps-total.
import { useState } from 'preact/hooks';
import type { Run, RunTreeNode } from '../../client/index.js';
import { AnswerReceipts, useAnswerReceipts } from '../components/answer-receipts.js';
import { ErrorNote } from '../components/error-note.js';
import { MessageBox } from '../components/message-box.js';
import { QuestionForm } from '../components/question-form.js';
import { RunActions } from '../components/run-actions.js';
import { RunTreeView } from '../components/run-tree-view.js';
import { RunWaits } from '../components/run-waits.js';
import { StatusBadge } from '../components/status-badge.js';
import { StepTimeline } from '../components/step-timeline.js';
import { ModelText, Text, visibleText } from '../components/text.js';
import { type ForkPoint, TranscriptView } from '../components/transcript-view.js';
import { usePoll } from '../components/use-poll.js';
import { useTranscript } from '../components/use-transcript.js';
import { formatCost, formatCount, formatDuration, formatTime } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref, sessionHref } from '../router.js';

const finished = new Set(['completed', 'failed', 'cancelled']);

export function RunPage({ client, params }: PageProps) {
  const runId = params.id ?? '';
  const [forkAt, setForkAt] = useState<ForkPoint | undefined>(undefined);
  const run = usePoll((signal) => client.get(runId, { signal }), [client, runId]);
  const done = run.data !== undefined && finished.has(run.data.status);
  // A finished run changes no more (but for retried_by): poll it slowly.
  const slow = done ? 15_000 : 2000;
  const tree = usePoll((signal) => client.tree(runId, { signal }), [client, runId], slow);
  const steps = usePoll(
    (signal) => client.steps(runId, { limit: 100, cut_at: 300 }, { signal }),
    [client, runId],
    slow,
  );
  const sessionId = run.data?.session_id;
  const questions = usePoll(
    (signal) => (sessionId === undefined ? Promise.resolve([]) : client.questions(sessionId, { signal })),
    [client, sessionId],
  );
  const transcript = useTranscript(client, runId, sessionId);
  const receipts = useAnswerReceipts();

  if (run.data === undefined) {
    return (
      <section data-testid="run-page" aria-labelledby="run-heading">
        <h1 id="run-heading">Run {runId}</h1>
        {run.error === undefined ? <p>Loading…</p> : <ErrorNote error={run.error} />}
      </section>
    );
  }
  const current = run.data;
  const treeIds = new Set(tree.data?.runs.map((node) => node.run_id) ?? [runId]);
  const pending = (questions.data ?? []).filter(
    (question) => question.status === 'pending' && treeIds.has(question.run_id),
  );
  const refresh = () => {
    run.refresh();
    tree.refresh();
    steps.refresh();
    questions.refresh();
  };

  return (
    <section class="run-page" data-testid="run-page" aria-labelledby="run-heading">
      <div class="run-header">
        <h1 id="run-heading">
          Run <span class="mono">{current.id}</span>
        </h1>
        <StatusBadge status={current.status} testId="run-status" />
      </div>
      <ErrorNote error={run.error} />
      {current.status === 'waiting_for_worker' && current.waiting_for && (
        <p class="note" data-testid="waiting-for-worker">
          <strong>Waiting for a worker:</strong> no live worker has{' '}
          {visibleText(current.waiting_for.missing.join(', '))} (since {current.waiting_for.since}). The run
          holds no worker and goes on by itself when one that has it starts.
        </p>
      )}
      {current.status === 'queued' && current.queued_reason && (
        <p class="note" data-testid="queued-reason">
          <strong>Waiting for admission:</strong> {visibleText(current.queued_reason.message)}. The run holds
          no worker and starts when a slot frees.
        </p>
      )}
      <RunFacts run={current} top={tree.data?.runs.find((node) => node.run_id === runId)} />
      <AnswerReceipts receipts={receipts.receipts} />
      <RunWaits waiting={current.waiting} />
      {pending.length > 0 && (
        <section class="panel" aria-labelledby="questions-heading" data-testid="pending-questions">
          <h2 id="questions-heading">Waiting for you</h2>
          {pending.map((question) => (
            <QuestionForm
              key={question.id}
              client={client}
              question={question}
              onAnswered={(response) => {
                receipts.add(question, response);
                refresh();
              }}
            />
          ))}
        </section>
      )}
      <RunActions
        client={client}
        run={current}
        forkAt={forkAt}
        onForkDismissed={() => setForkAt(undefined)}
        onChanged={refresh}
      />
      {current.depth === 0 && !finished.has(current.status) && (
        <MessageBox client={client} run={current} onChanged={refresh} />
      )}
      <div class="run-grid">
        <section class="panel" aria-labelledby="tree-heading">
          <h2 id="tree-heading">Tree</h2>
          <ErrorNote error={tree.error} />
          {tree.data !== undefined && (
            <RunTreeView tree={tree.data} currentRunId={runId} subGoals={current.progress?.sub_goals ?? []} />
          )}
          {current.progress !== null && (
            <p class="muted">
              Progress: <Text value={current.progress.message} />
            </p>
          )}
        </section>
        <section class="panel" aria-labelledby="transcript-heading">
          <h2 id="transcript-heading">Transcript</h2>
          <TranscriptView
            runId={runId}
            transcript={transcript}
            {...(current.depth === 0 ? { onFork: setForkAt } : {})}
          />
        </section>
      </div>
      <section class="panel" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Steps</h2>
        <ErrorNote error={steps.error} />
        {steps.data !== undefined &&
          (steps.data.steps.length === 0 ? (
            <p class="muted">No step recorded yet.</p>
          ) : (
            <StepTimeline steps={steps.data} run={current} />
          ))}
      </section>
    </section>
  );
}

/**
 * What the run is: its agent, times, iterations and usage. Its duration is the API's (the tree shows the
 * same number); with runs below it (a team's members, a delegating agent's delegates) its usage is shown
 * with theirs, from its tree's total, beside its own.
 */
function RunFacts({ run, top }: { run: Run; top: RunTreeNode | undefined }) {
  const below = top !== undefined && top.children > 0 ? top.total : undefined;
  return (
    <>
      <dl class="facts" data-testid="run-facts">
        {run.input_line !== null && (
          <div class="fact-wide">
            <dt>Task</dt>
            <dd data-testid="run-task">
              <Text value={run.input_line} />
            </dd>
          </div>
        )}
        <div>
          <dt>Agent</dt>
          <dd>
            <Text value={run.agent} />
          </dd>
        </div>
        <div>
          <dt>Session</dt>
          <dd class="mono">
            <a href={sessionHref(run.session_id)}>{run.session_id}</a>
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={run.created_at}>{formatTime(run.created_at)}</time>
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd data-testid="run-duration">{formatDuration(run.duration_ms)}</dd>
        </div>
        <div>
          <dt>Iterations</dt>
          <dd>
            {formatCount(run.iterations)}
            {run.max_iterations !== null && ` of at most ${run.max_iterations}`}
          </dd>
        </div>
        {below !== undefined && (
          <>
            <div>
              <dt>Tokens with the runs below (in / out)</dt>
              <dd data-testid="run-tokens-total">
                {formatCount(below.tokens.input)} / {formatCount(below.tokens.output)}
              </dd>
            </div>
            <div>
              <dt>Cost with the runs below</dt>
              <dd data-testid="run-cost-total">{formatCost(below.cost_usd)}</dd>
            </div>
          </>
        )}
        <div>
          <dt>{below === undefined ? 'Tokens (in / out)' : 'Its own tokens (in / out)'}</dt>
          <dd data-testid="run-tokens">
            {formatCount(run.usage.input_tokens)} / {formatCount(run.usage.output_tokens)}
          </dd>
        </div>
        <div>
          <dt>{below === undefined ? 'Cost' : 'Its own cost'}</dt>
          <dd data-testid="run-cost">{formatCost(run.cost_usd)}</dd>
        </div>
        {run.parent_run_id !== null && (
          <div>
            <dt>Parent run</dt>
            <dd class="mono">
              <a href={runHref(run.parent_run_id)} data-testid="parent-link">
                {run.parent_run_id}
              </a>
            </dd>
          </div>
        )}
        {run.origin !== null && run.origin.kind === 'schedule' && (
          <div>
            <dt>Started by schedule</dt>
            <dd data-testid="origin-schedule">
              <a href="#/schedules">
                <Text value={run.origin.schedule} />
              </a>{' '}
              for its fire at <time dateTime={run.origin.fire_at}>{formatTime(run.origin.fire_at)}</time>
            </dd>
          </div>
        )}
        {run.origin !== null && run.origin.kind !== 'schedule' && (
          <div>
            <dt>
              {run.origin.kind === 'retry' ? 'Retries' : `Forked at iteration ${run.origin.at_iteration} of`}
            </dt>
            <dd class="mono">
              <a href={runHref(run.origin.run_id)} data-testid="origin-link">
                {run.origin.run_id}
              </a>
            </dd>
          </div>
        )}
        {run.definition !== null && (
          <div>
            <dt>Definition</dt>
            <dd class="mono" data-testid="run-definition" title={`taken ${run.definition.recorded_at}`}>
              {run.definition.hash.slice(0, 12)}
            </dd>
          </div>
        )}
        {run.retried_by !== null && (
          <div>
            <dt>Retried by</dt>
            <dd class="mono">
              <a href={runHref(run.retried_by)} data-testid="retried-by">
                {run.retried_by}
              </a>
            </dd>
          </div>
        )}
      </dl>
      {run.error !== null && (
        <p class="error" data-testid="run-error">
          {visibleText(`${run.error.code}: ${run.error.message}`)}
        </p>
      )}
      {run.result !== null && (
        <div class="panel" data-testid="run-result">
          <h2>Result</h2>
          <p class="model-text">
            <ModelText value={run.result} />
          </p>
        </div>
      )}
    </>
  );
}
