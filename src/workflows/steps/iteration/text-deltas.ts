import { buildEvent } from '../../../events/event.js';
import type { StepContext } from '../runner/step-context.js';

export interface TextDeltaStream {
  onTextDelta: (delta: string) => void;
  /** Resolves when every delta is in the log (before the reply's commit, so they precede message_added). */
  flush: () => Promise<void>;
}

/**
 * Streams a model reply's text to the session's events. Deltas are not state changes, so they are appended
 * outside the commit; an iteration started before announces its new attempt first (attempt_retried), so a
 * client drops the partial text of an attempt that died. The recorded reply stays the one source of truth.
 */
export function streamTextDeltas(
  context: StepContext,
  run: { sessionId: string; runId: string; agent: string; iteration: number },
): TextDeltaStream {
  const { services } = context;
  const attempt = context.started;
  const pending: Promise<unknown>[] = [];
  const append = (event: ReturnType<typeof buildEvent>) => {
    pending.push(
      context.store
        .appendTransientEvent(event)
        .catch((error: unknown) => context.logger.warn({ err: error }, 'a text delta was not recorded')),
    );
  };
  const owner = { id: run.runId, agent: run.agent };
  if (attempt > 1) {
    append(
      buildEvent(
        'attempt_retried',
        owner,
        { iteration: run.iteration, attempt },
        services.now().toISOString(),
      ),
    );
  }
  return {
    onTextDelta: (delta) =>
      append(
        buildEvent(
          'text_delta',
          owner,
          { iteration: run.iteration, attempt, delta },
          services.now().toISOString(),
        ),
      ),
    flush: async () => {
      await Promise.all(pending);
    },
  };
}
