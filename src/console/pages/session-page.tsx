// Test ids: session-summary, session-status, session-metadata, session-runs, session-run-row-<run id>, session-questions,
// session-state, session-tasks, session-task-<task id>, session-notes, session-note, session-approvals,
// session-approval-<key>, revoke-approval-<key>.

import { useState } from 'preact/hooks';
import type {
  Question,
  RatchetClient,
  RememberedApprovalView,
  RunListItem,
  Session,
  SessionNote,
  SessionTask,
} from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { QuestionForm } from '../components/question-form.js';
import { StatusBadge } from '../components/status-badge.js';
import { TableHead } from '../components/table-head.js';
import { ModelText, Text, visibleText } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { elapsedMs, formatCost, formatCount, formatDuration, formatTime, none } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref } from '../router.js';

/** The most runs of one session the page lists (newest first); the runs page pages through all. */
const runsShown = 100;

interface SessionView {
  session: Session;
  runs: RunListItem[];
  moreRuns: boolean;
  questions: Question[];
  approvals: RememberedApprovalView[];
  state: Record<string, unknown>;
  tasks: SessionTask[];
  notes: SessionNote[];
}

/** A session: its runs, pending questions, state blackboard, task board and notes, refreshed every 2 s. */
export function SessionPage({ client, params }: PageProps) {
  const sessionId = params.id ?? '';
  const poll = usePoll((signal) => loadSession(client, sessionId, signal), [client, sessionId]);
  const view = poll.data;
  return (
    <section aria-labelledby="session-heading">
      <h1 id="session-heading">
        Session <code>{sessionId}</code>
      </h1>
      <ErrorNote error={poll.error} />
      {view === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          <SessionSummary session={view.session} />
          <SessionMetadata metadata={view.session.metadata} />
          <SessionRuns runs={view.runs} more={view.moreRuns} />
          {view.questions.length > 0 && (
            <section aria-labelledby="session-questions-heading" data-testid="session-questions">
              <h2 id="session-questions-heading">Waiting for an answer</h2>
              {view.questions.map((question) => (
                <QuestionForm
                  key={question.id}
                  client={client}
                  question={question}
                  onAnswered={poll.refresh}
                />
              ))}
            </section>
          )}
          <SessionApprovals
            client={client}
            sessionId={sessionId}
            approvals={view.approvals}
            onRevoked={poll.refresh}
          />
          <SessionState state={view.state} />
          <SessionTasks tasks={view.tasks} />
          <SessionNotes notes={view.notes} />
        </>
      )}
    </section>
  );
}

async function loadSession(
  client: RatchetClient,
  sessionId: string,
  signal: AbortSignal,
): Promise<SessionView> {
  const options = { signal };
  const [session, page, questions, approvals, state, tasks, notes] = await Promise.all([
    client.session(sessionId, options),
    client.list({ session_id: sessionId, limit: runsShown }, options),
    client.questions(sessionId, options),
    client.approvals(sessionId, options),
    client.state(sessionId, options),
    client.tasks(sessionId, options),
    client.notes(sessionId, options),
  ]);
  return {
    session,
    runs: page.runs,
    moreRuns: page.next_cursor !== null,
    questions: questions.filter((question) => question.status === 'pending'),
    approvals,
    state,
    tasks,
    notes,
  };
}

function SessionSummary({ session }: { session: Session }) {
  const usage = session.usage;
  return (
    <dl class="facts" data-testid="session-summary">
      <div>
        <dt>Agent</dt>
        <dd>
          <Text value={session.agent} />
        </dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd data-testid="session-status" data-status={session.status}>
          {session.status === 'active' && session.active_run_id !== null ? (
            <>
              active: run <a href={runHref(session.active_run_id)}>{session.active_run_id}</a>
            </>
          ) : (
            session.status
          )}
        </dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>
          <time dateTime={session.created_at}>{formatTime(session.created_at)}</time>
        </dd>
      </div>
      <div>
        <dt>Model requests</dt>
        <dd>{formatCount(usage.requests)}</dd>
      </div>
      <div>
        <dt>Tokens in / out</dt>
        <dd>
          {formatCount(usage.input_tokens)} / {formatCount(usage.output_tokens)}
        </dd>
      </div>
      <div>
        <dt>Cost</dt>
        <dd>{formatCost(usage.cost_usd)}</dd>
      </div>
    </dl>
  );
}

/** What the client that started the session attached to it (client text: shown as text). */
function SessionMetadata({ metadata }: { metadata: Session['metadata'] }) {
  if (Object.keys(metadata).length === 0) return null;
  return (
    <section aria-labelledby="session-metadata-heading">
      <h2 id="session-metadata-heading">Metadata</h2>
      <pre class="code-block" data-testid="session-metadata">
        {visibleText(JSON.stringify(metadata, null, 2))}
      </pre>
    </section>
  );
}

function SessionRuns({ runs, more }: { runs: RunListItem[]; more: boolean }) {
  return (
    <section aria-labelledby="session-runs-heading">
      <h2 id="session-runs-heading">Runs</h2>
      {runs.length === 0 ? (
        <p>No runs.</p>
      ) : (
        <div class="table-scroll">
          <table data-testid="session-runs">
            <caption class="visually-hidden">Runs of this session, newest first</caption>
            <TableHead
              columns={[
                { label: 'Run' },
                { label: 'Agent' },
                { label: 'Status' },
                { label: 'Started' },
                { label: 'Duration' },
                { label: 'Iterations' },
                { label: 'Tokens' },
                { label: 'Cost' },
              ]}
            />
            <tbody>
              {runs.map((run) => (
                <tr key={run.id} data-testid={`session-run-row-${run.id}`}>
                  <td>
                    <a href={runHref(run.id)}>{run.id}</a>
                    {run.root_run_id !== null && <span class="muted"> (child)</span>}
                  </td>
                  <td>
                    <Text value={run.agent} />
                  </td>
                  <td>
                    <StatusBadge status={run.status} />
                  </td>
                  <td>{formatTime(run.started_at ?? run.created_at)}</td>
                  <td>{formatDuration(elapsedMs(run.started_at, run.finished_at))}</td>
                  <td>{formatCount(run.iterations)}</td>
                  <td>
                    {run.usage === null
                      ? none
                      : formatCount(run.usage.input_tokens + run.usage.output_tokens)}
                  </td>
                  <td>{formatCost(run.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && <p>The newest {runsShown} runs are shown.</p>}
    </section>
  );
}

/** What a remembered approval lets through without asking, in words. */
function approvalScope(approval: RememberedApprovalView) {
  if (approval.scope === 'tool') return <>every call</>;
  if (approval.scope === 'arguments')
    return (
      <>
        these arguments: <code>{visibleText(approval.arguments ?? '')}</code>
      </>
    );
  return (
    <>
      paths under <code>{visibleText(approval.path_prefix ?? '')}</code>
    </>
  );
}

/** The session's remembered approvals (decision 0046), each with a Revoke button. */
function SessionApprovals({
  client,
  sessionId,
  approvals,
  onRevoked,
}: {
  client: RatchetClient;
  sessionId: string;
  approvals: RememberedApprovalView[];
  onRevoked: () => void;
}) {
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const revoke = async (key: string) => {
    setBusy(key);
    setError(undefined);
    try {
      await client.revokeApproval(sessionId, key);
      onRevoked();
    } catch (thrown) {
      setError(thrown);
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section aria-labelledby="session-approvals-heading">
      <h2 id="session-approvals-heading">Remembered approvals</h2>
      <ErrorNote error={error} />
      {approvals.length === 0 ? (
        <p>No remembered approvals: every call that needs approval is asked about.</p>
      ) : (
        <div class="table-scroll">
          <table data-testid="session-approvals">
            <caption class="visually-hidden">
              Tool calls approved for the rest of this session, oldest first
            </caption>
            <TableHead
              columns={[
                { label: 'Tool' },
                { label: 'Approved for' },
                { label: 'Since' },
                { label: 'Revoke' },
              ]}
            />
            <tbody>
              {approvals.map((approval) => (
                <tr key={approval.key} data-testid={`session-approval-${approval.key}`}>
                  <td>
                    <Text value={approval.tool} />
                  </td>
                  <td>{approvalScope(approval)}</td>
                  <td>{formatTime(approval.created_at)}</td>
                  <td>
                    <button
                      type="button"
                      disabled={busy !== undefined}
                      onClick={() => void revoke(approval.key)}
                      data-testid={`revoke-approval-${approval.key}`}
                      aria-label={`Revoke the remembered approval of ${visibleText(approval.tool)}`}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function SessionState({ state }: { state: Record<string, unknown> }) {
  const keys = Object.keys(state).sort();
  return (
    <section aria-labelledby="session-state-heading">
      <h2 id="session-state-heading">State</h2>
      {keys.length === 0 ? (
        <p>No state keys.</p>
      ) : (
        <dl class="state-list" data-testid="session-state">
          {keys.map((key) => (
            <div key={key}>
              <dt>
                <code>{visibleText(key)}</code>
              </dt>
              <dd>
                <pre class="code-block">
                  {visibleText(JSON.stringify(state[key], null, 2) ?? 'undefined')}
                </pre>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

function SessionTasks({ tasks }: { tasks: SessionTask[] }) {
  return (
    <section aria-labelledby="session-tasks-heading">
      <h2 id="session-tasks-heading">Tasks</h2>
      {tasks.length === 0 ? (
        <p>No tasks.</p>
      ) : (
        <div class="table-scroll">
          <table data-testid="session-tasks">
            <caption class="visually-hidden">The session's task board</caption>
            <TableHead
              columns={[
                { label: 'Task' },
                { label: 'Status' },
                { label: 'Assignee' },
                { label: 'Latest note' },
                { label: 'Updated' },
              ]}
            />
            <tbody>
              {tasks.map((task) => (
                <tr key={task.id} data-testid={`session-task-${task.id}`}>
                  <td>
                    <strong>
                      <Text value={task.title} />
                    </strong>
                    {task.description !== '' && (
                      <div class="muted">
                        <ModelText value={task.description} />
                      </div>
                    )}
                  </td>
                  <td>
                    <span class={`status status-task-${task.status}`}>{task.status.replace('_', ' ')}</span>
                  </td>
                  <td>{task.assignee === null ? none : <Text value={task.assignee.agent} />}</td>
                  <td>{task.note === null ? none : <ModelText value={task.note} />}</td>
                  <td>{formatTime(task.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function SessionNotes({ notes }: { notes: SessionNote[] }) {
  return (
    <section aria-labelledby="session-notes-heading">
      <h2 id="session-notes-heading">Notes</h2>
      {notes.length === 0 ? (
        <p>No notes.</p>
      ) : (
        <ul class="note-list" data-testid="session-notes">
          {notes.map((note) => (
            <li key={`${note.scope}:${note.agent ?? ''}:${note.name}`} data-testid="session-note">
              <details>
                <summary>
                  <Text value={note.name} />{' '}
                  <span class="muted">
                    ({note.scope === 'agent' ? <Text value={`${note.agent ?? ''}'s`} /> : 'shared'}, by{' '}
                    <Text value={note.written_by.agent} />, {formatTime(note.updated_at)})
                  </span>
                </summary>
                <pre class="code-block">{visibleText(note.content)}</pre>
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
