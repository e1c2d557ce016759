// Test ids: inbox-list, inbox-item (data-question-id, data-kind), inbox-empty, inbox-count; each item holds
// the question form's ids (answer-form, answer-input, answer-submit, approve, reject …).
import type { Question, RatchetClient } from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { QuestionForm } from '../components/question-form.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { formatTime } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref, sessionHref } from '../router.js';

/** The most runs waiting for input the inbox looks at in one refresh. */
const runsLooked = 200;

interface Inbox {
  questions: Question[];
  /** More runs wait for input than were looked at: the oldest questions may be missing. */
  more: boolean;
}

/**
 * Every pending question and approval across sessions, oldest first, each answerable in place. A run with a
 * pending question is listed by the run index as waiting_input; the inbox reads those runs' sessions'
 * questions.
 */
export function InboxPage({ client }: PageProps) {
  const poll = usePoll((signal) => pendingQuestions(client, signal), [client]);
  const inbox = poll.data;
  return (
    <section aria-labelledby="inbox-heading">
      <h1 id="inbox-heading">Inbox</h1>
      <p class="page-intro">
        Questions agents asked and tool calls waiting for approval, across all sessions.
      </p>
      <ErrorNote error={poll.error} />
      {inbox === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : inbox.questions.length === 0 ? (
        <p data-testid="inbox-empty">Nothing is waiting for an answer.</p>
      ) : (
        <>
          <p role="status" data-testid="inbox-count">
            {inbox.questions.length === 1 ? '1 pending' : `${inbox.questions.length} pending`}
            {inbox.more && ` (from the newest ${runsLooked} runs waiting for input)`}
          </p>
          <ul class="inbox-list" data-testid="inbox-list">
            {inbox.questions.map((question) => (
              <li
                key={question.id}
                class="inbox-item"
                data-testid="inbox-item"
                data-question-id={question.id}
                data-kind={question.kind}
              >
                <p class="inbox-context">
                  Run <a href={runHref(question.run_id)}>{question.run_id}</a> in session{' '}
                  <a href={sessionHref(question.session_id)}>{question.session_id}</a>, asked{' '}
                  <time dateTime={question.created_at}>{formatTime(question.created_at)}</time>
                  {question.timeout_at !== null && (
                    <>
                      ; on its own at{' '}
                      <time dateTime={question.timeout_at}>{formatTime(question.timeout_at)}</time>
                      {question.default_answer !== null && (
                        <>
                          {' '}
                          with “<Text value={question.default_answer} />”
                        </>
                      )}
                    </>
                  )}
                </p>
                <QuestionForm client={client} question={question} onAnswered={poll.refresh} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

async function pendingQuestions(client: RatchetClient, signal: AbortSignal): Promise<Inbox> {
  const page = await client.list({ status: 'waiting_input', limit: runsLooked }, { signal });
  // A child run that asks lists its root as waiting_input too: one read per session.
  const sessionIds = [...new Set(page.runs.map((run) => run.session_id))];
  const lists = await Promise.all(sessionIds.map((sessionId) => client.questions(sessionId, { signal })));
  const questions = lists
    .flat()
    .filter((question) => question.status === 'pending')
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return { questions, more: page.next_cursor !== null };
}
