import { useState } from 'preact/hooks';
import type { AcceptedRun, RatchetClient, Run } from '../../client/index.js';
import { runHref } from '../router.js';
import { describeError } from './error-note.js';
import { visibleText } from './text.js';
import type { ForkPoint } from './transcript-view.js';

const finished = new Set(['completed', 'failed', 'cancelled']);

export interface RunActionsProps {
  client: RatchetClient;
  run: Run;
  /** The iteration chosen in the transcript to fork at, or undefined. */
  forkAt: ForkPoint | undefined;
  onForkDismissed: () => void;
  onChanged: () => void;
}

/**
 * Cancel a run that is not finished; retry a failed or cancelled root run not retried yet; fork at the
 * iteration chosen in the transcript (with a new message, optionally). After a retry or fork the page goes
 * to the new run. Test ids: run-actions, cancel-run, retry-run, fork-form, fork-input, fork-run,
 * fork-dismiss, action-error.
 */
export function RunActions({ client, run, forkAt, onForkDismissed, onChanged }: RunActionsProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [forkInput, setForkInput] = useState('');

  const act = async (action: () => Promise<AcceptedRun | Run>) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await action();
      if ('run_id' in answer) location.hash = runHref(answer.run_id);
      else onChanged();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const canCancel = !finished.has(run.status);
  const canRetry =
    (run.status === 'failed' || run.status === 'cancelled') && run.retried_by === null && run.depth === 0;
  const fork = (event: SubmitEvent) => {
    event.preventDefault();
    if (forkAt === undefined) return;
    const input = forkInput.trim();
    void act(() =>
      client.fork(forkAt.runId, { at_iteration: forkAt.iteration, ...(input === '' ? {} : { input }) }),
    );
  };

  return (
    <div class="run-actions" data-testid="run-actions">
      <div class="actions">
        {canCancel && (
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => void act(() => client.cancel(run.id, { reason: 'cancelled in the console' }))}
            data-testid="cancel-run"
          >
            Cancel run
          </button>
        )}
        {canRetry && (
          <button
            type="button"
            disabled={busy}
            onClick={() => void act(() => client.retry(run.id))}
            data-testid="retry-run"
          >
            Retry run
          </button>
        )}
        {run.depth === 0 && forkAt === undefined && (
          <span class="muted">To fork, choose “Fork here” on a reply in the transcript.</span>
        )}
      </div>
      {forkAt !== undefined && (
        <form class="panel fork-form" onSubmit={fork} data-testid="fork-form" aria-labelledby="fork-heading">
          <h2 id="fork-heading">
            Fork {forkAt.runId === run.id ? 'this run' : forkAt.runId} at iteration {forkAt.iteration}
          </h2>
          <p class="muted">
            A new session continues a copy of the chat up to that reply; nothing before it is asked again.
          </p>
          <label for="fork-input">New message (optional)</label>
          <textarea
            id="fork-input"
            rows={2}
            value={forkInput}
            onInput={(event) => setForkInput(event.currentTarget.value)}
            data-testid="fork-input"
          />
          <div class="button-row">
            <button type="submit" disabled={busy} data-testid="fork-run">
              Fork
            </button>
            <button type="button" class="secondary" onClick={onForkDismissed} data-testid="fork-dismiss">
              Cancel fork
            </button>
          </div>
        </form>
      )}
      {error !== undefined && (
        <p class="error" role="alert" data-testid="action-error">
          {visibleText(error)}
        </p>
      )}
    </div>
  );
}
