import { useState } from 'preact/hooks';
import type { RatchetClient, Run } from '../../client/index.js';
import { runHref } from '../router.js';
import { describeError } from './error-note.js';
import { visibleText } from './text.js';

type OnBusy = 'queue' | 'steer' | 'interrupt' | 'reject';
type Sent = Awaited<ReturnType<RatchetClient['send']>>;

/** The four choices, in the order shown, with what each does (decision 0032). */
const choices: { value: OnBusy; label: string; about: string }[] = [
  { value: 'steer', label: 'Steer', about: 'joins this run before its next model call' },
  { value: 'queue', label: 'Queue', about: "becomes the session's next run when this one ends" },
  { value: 'interrupt', label: 'Interrupt', about: 'cancels this run and starts a new one with it' },
  { value: 'reject', label: 'Only if idle', about: 'refused while this run is active' },
];

export interface MessageBoxProps {
  client: RatchetClient;
  run: Run;
  onChanged: () => void;
}

/**
 * A message to the session of an active root run, with what it does while the run is active: steer, queue,
 * interrupt, or reject. After an interrupt the page goes to the new run. Test ids: message-box,
 * message-input, on-busy-<value>, send-message, message-sent (data-delivery), message-error.
 */
export function MessageBox({ client, run, onChanged }: MessageBoxProps) {
  const [text, setText] = useState('');
  const [onBusy, setOnBusy] = useState<OnBusy>('steer');
  const [sending, setSending] = useState(false);
  const [sent, setSent] = useState<Sent | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const message = text.trim();
    if (message === '') return;
    setSending(true);
    setError(undefined);
    try {
      const answer = await client.send(run.session_id, { text: message, on_busy: onBusy });
      setSent(answer);
      setText('');
      if (answer.delivery === 'interrupted' || (answer.delivery === 'started' && answer.run_id !== run.id)) {
        location.hash = runHref(answer.run_id);
      } else onChanged();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setSending(false);
    }
  };

  return (
    <form
      class="panel message-box"
      onSubmit={send}
      data-testid="message-box"
      aria-labelledby="message-heading"
    >
      <h2 id="message-heading">Message the session</h2>
      <label for="message-input">Message</label>
      <textarea
        id="message-input"
        rows={2}
        maxLength={100_000}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        data-testid="message-input"
      />
      <fieldset class="choices">
        <legend>While this run is active</legend>
        {choices.map((choice) => (
          <label key={choice.value} class="choice">
            <input
              type="radio"
              name="on-busy"
              value={choice.value}
              checked={onBusy === choice.value}
              onChange={() => setOnBusy(choice.value)}
              data-testid={`on-busy-${choice.value}`}
            />
            <strong>{choice.label}</strong> <span class="muted">{choice.about}</span>
          </label>
        ))}
      </fieldset>
      <div class="button-row">
        <button type="submit" disabled={sending || text.trim() === ''} data-testid="send-message">
          Send
        </button>
      </div>
      {sent !== undefined && (
        <p class="muted" role="status" data-testid="message-sent" data-delivery={sent.delivery}>
          {describeSent(sent)}
        </p>
      )}
      {error !== undefined && (
        <p class="error" role="alert" data-testid="message-error">
          {visibleText(error)}
        </p>
      )}
    </form>
  );
}

function describeSent(sent: Sent): string {
  switch (sent.delivery) {
    case 'steered':
      return `Steered into run ${sent.run_id} (message ${sent.message_id ?? ''}): it joins the chat before the run's next model call.`;
    case 'queued':
      return `Queued at position ${(sent.position ?? 0) + 1} (message ${sent.message_id ?? ''}): it will start run ${sent.run_id}.`;
    case 'interrupted':
      return `Run ${sent.interrupted_run_id ?? ''} was cancelled; run ${sent.run_id} started.`;
    case 'started':
      return `Run ${sent.run_id} started.`;
  }
}
