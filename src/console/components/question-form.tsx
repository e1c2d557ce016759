import { useState } from 'preact/hooks';
import type { Question, QuestionResponse, RatchetClient } from '../../client/index.js';
import { describeError } from './error-note.js';
import { ModelText, Text, visibleText } from './text.js';

export interface QuestionFormProps {
  client: RatchetClient;
  /** A pending question of kind ask_user, approval or budget. */
  question: Question;
  /** Called once the API took the answer, with what was sent. */
  onAnswered?: (response: QuestionResponse) => void;
}

/**
 * Answers a pending question in place: an agent's question (its options as buttons, or free text), a tool
 * call awaiting approval (approve, approve with edited arguments, reject with a reason), or a budget
 * (raise or stop). Test ids: answer-form, answer-input, answer-submit, answer-option, approve,
 * approve-remember-arguments, approve-remember-tool (remembered for the session, decision 0046),
 * edit-arguments, approve-edited, reject-reason, reject, budget-raise, budget-stop, answer-error.
 */
export function QuestionForm({ client, question, onAnswered }: QuestionFormProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [done, setDone] = useState(false);

  const send = async (response: QuestionResponse) => {
    setBusy(true);
    setError(undefined);
    try {
      await client.answer(question.session_id, question.id, response);
      setDone(true);
      onAnswered?.(response);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const idBase = `q-${question.id.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  return (
    <div class="question" data-testid="question" data-question-id={question.id} data-kind={question.kind}>
      <p class="question-meta">
        <span class="question-kind">{kindLabel[question.kind]}</span> from <Text value={question.agent} />
      </p>
      <p class="question-text">
        <ModelText value={question.question} />
      </p>
      {done ? (
        <p role="status" data-testid="answer-sent">
          Answer sent.
        </p>
      ) : question.kind === 'approval' ? (
        <ApprovalForm idBase={idBase} question={question} busy={busy} onSend={send} onInvalid={setError} />
      ) : question.kind === 'budget' ? (
        <div class="button-row">
          <button type="button" disabled={busy} onClick={() => void send('raise')} data-testid="budget-raise">
            Raise the budget
          </button>
          <button type="button" disabled={busy} onClick={() => void send('stop')} data-testid="budget-stop">
            Stop the run
          </button>
        </div>
      ) : (
        <AskUserForm idBase={idBase} question={question} busy={busy} onSend={send} />
      )}
      {error !== undefined && (
        <p class="error" role="alert" data-testid="answer-error">
          {visibleText(error)}
        </p>
      )}
    </div>
  );
}

const kindLabel: Record<Question['kind'], string> = {
  ask_user: 'Question',
  approval: 'Approval',
  budget: 'Budget',
};

interface FormPartProps {
  idBase: string;
  question: Question;
  busy: boolean;
  onSend: (response: QuestionResponse) => Promise<void>;
}

function AskUserForm({ idBase, question, busy, onSend }: FormPartProps) {
  const [text, setText] = useState('');
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    if (text.trim() !== '') void onSend(text);
  };
  return (
    <form class="answer-form" onSubmit={submit} data-testid="answer-form">
      {question.options.length > 0 && (
        <fieldset class="button-row options">
          <legend>Options</legend>
          {question.options.map((option) => (
            <button
              type="button"
              key={option}
              disabled={busy}
              onClick={() => void onSend(option)}
              data-testid="answer-option"
            >
              {visibleText(option)}
            </button>
          ))}
        </fieldset>
      )}
      <label for={`${idBase}-answer`}>Your answer</label>
      <textarea
        id={`${idBase}-answer`}
        rows={2}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        data-testid="answer-input"
      />
      <button type="submit" disabled={busy || text.trim() === ''} data-testid="answer-submit">
        Send answer
      </button>
    </form>
  );
}

function ApprovalForm({
  idBase,
  question,
  busy,
  onSend,
  onInvalid,
}: FormPartProps & { onInvalid: (message: string) => void }) {
  const tool = question.tool;
  const shownArguments = prettyJson(tool?.arguments ?? '');
  const [edited, setEdited] = useState(shownArguments);
  const [reason, setReason] = useState('');

  const approveEdited = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(edited);
    } catch {
      onInvalid('The edited arguments are not JSON.');
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      onInvalid('The edited arguments must be a JSON object.');
      return;
    }
    void onSend({ decision: 'approve', arguments: parsed as Record<string, unknown> });
  };
  const reject = () => {
    const why = reason.trim();
    void onSend(why === '' ? { decision: 'reject' } : { decision: 'reject', reason: why });
  };

  return (
    <div class="approval" data-testid="answer-form">
      {tool !== null && (
        <>
          <p>
            Tool <code>{visibleText(tool.name)}</code> with arguments:
          </p>
          <pre class="code-block" data-testid="approval-arguments">
            {visibleText(shownArguments)}
          </pre>
        </>
      )}
      <div class="button-row">
        <button type="button" disabled={busy} onClick={() => void onSend('approve')} data-testid="approve">
          Approve
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() => void onSend({ decision: 'approve', remember: 'arguments' })}
          data-testid="approve-remember-arguments"
        >
          Approve these arguments for this session
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() => void onSend({ decision: 'approve', remember: 'tool' })}
          data-testid="approve-remember-tool"
        >
          Approve this tool for this session
        </button>
      </div>
      <details class="edit-arguments">
        <summary data-testid="edit-arguments">Edit the arguments, then approve</summary>
        <label for={`${idBase}-arguments`}>Arguments (JSON)</label>
        <textarea
          id={`${idBase}-arguments`}
          rows={5}
          value={edited}
          onInput={(event) => setEdited(event.currentTarget.value)}
          data-testid="edited-arguments"
        />
        <button type="button" disabled={busy} onClick={approveEdited} data-testid="approve-edited">
          Approve with these arguments
        </button>
      </details>
      <label for={`${idBase}-reason`}>Reason to reject (the model reads it)</label>
      <input
        id={`${idBase}-reason`}
        type="text"
        value={reason}
        onInput={(event) => setReason(event.currentTarget.value)}
        data-testid="reject-reason"
      />
      <button type="button" class="danger" disabled={busy} onClick={reject} data-testid="reject">
        Reject
      </button>
    </div>
  );
}

/** JSON text indented for reading; text that is not JSON as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
