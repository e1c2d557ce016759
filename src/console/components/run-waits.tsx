import type { Run } from '../../client/index.js';
import { formatTime } from '../format.js';
import { Text } from './text.js';

/**
 * What a run's parked tool calls wait for (decision 0033): an event until its wait times out, or a sleep
 * until it ends. Nothing when it waits for neither. The event name came from a model: shown as text.
 */
export function RunWaits({ waiting }: { waiting: Run['waiting'] }) {
  if (waiting.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="waits-heading" data-testid="run-waits">
      <h2 id="waits-heading">Waiting</h2>
      <ul>
        {waiting.map((wait) => (
          <li key={`${wait.kind} ${wait.event ?? ''} ${wait.since}`} data-testid="run-wait">
            {wait.kind === 'sleep' ? (
              'Sleeping until '
            ) : (
              <>
                For the event <Text value={wait.event ?? ''} /> until{' '}
              </>
            )}
            <time dateTime={wait.until} data-testid="run-wait-until">
              {formatTime(wait.until)}
            </time>
          </li>
        ))}
      </ul>
    </section>
  );
}
