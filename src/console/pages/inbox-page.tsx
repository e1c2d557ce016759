// Test ids: inbox-list, inbox-item (data-question-id, data-kind), inbox-empty, inbox-count, answer-receipts,
// answer-receipt; each item holds the question form's ids (answer-form, answer-input, answer-submit, approve,
// reject …).
import { AnswerReceipts, useAnswerReceipts } from '../components/answer-receipts.js';
import { ErrorNote } from '../components/error-note.js';
import { QuestionForm } from '../components/question-form.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { formatTime } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref, sessionHref } from '../router.js';

/** The most questions the inbox shows (the API's largest page): `truncated` says when more are pending. */
const shownAtMost = 500;

/**
 * Every pending question and approval across sessions (GET /v1/questions), newest first, each answerable in
 * place; an answered one leaves the list at the next refresh, and a confirmation above the list says it went.
 */
export function InboxPage({ client }: PageProps) {
  const poll = usePoll((signal) => client.inbox({ limit: shownAtMost }, { signal }), [client]);
  const inbox = poll.data;
  const { receipts, add } = useAnswerReceipts();
  return (
    <section aria-labelledby="inbox-heading">
      <h1 id="inbox-heading">Inbox</h1>
      <p class="page-intro">
        Questions agents asked and tool calls waiting for approval, across all sessions, newest first.
      </p>
      <ErrorNote error={poll.error} />
      <AnswerReceipts receipts={receipts} />
      {inbox === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : inbox.questions.length === 0 ? (
        <p data-testid="inbox-empty">Nothing is waiting for an answer.</p>
      ) : (
        <>
          <p role="status" data-testid="inbox-count">
            {inbox.questions.length === 1 ? '1 pending' : `${inbox.questions.length} pending`}
            {inbox.truncated && ` (the newest ${shownAtMost} are shown)`}
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
                  <a href={sessionHref(question.session_id)}>{question.session_id}</a>
                  {question.root_run_id !== null && (
                    <>
                      {' '}
                      (under run <a href={runHref(question.root_run_id)}>{question.root_run_id}</a>)
                    </>
                  )}
                  , asked <time dateTime={question.created_at}>{formatTime(question.created_at)}</time>
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
                <QuestionForm
                  client={client}
                  question={question}
                  onAnswered={(response) => {
                    add(question, response);
                    poll.refresh();
                  }}
                />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
