import { useEffect, useState } from 'preact/hooks';
import type { RatchetClient } from '../../client/index.js';
import { describeError } from './error-note.js';
import { emptyTranscript, type Transcript, TranscriptBuilder } from './transcript-state.js';

export type { RunningCall, Transcript, TranscriptNote } from './transcript-state.js';

/**
 * What a run said and did, live: a root run's chat read once (GET /v1/sessions/:id/messages: a fork's copied
 * chat has no events), then the session's events through the client's iterator until the run's terminal
 * event (TranscriptBuilder says what each does).
 */
export function useTranscript(
  client: RatchetClient,
  runId: string,
  sessionId: string | undefined,
  root: boolean,
) {
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);

  useEffect(() => {
    if (sessionId === undefined) return;
    const controller = new AbortController();
    const builder = new TranscriptBuilder(runId);
    let scheduled = false;
    const publish = () => {
      if (scheduled || controller.signal.aborted) return;
      scheduled = true;
      // Many events arrive at once from the backlog: render once per frame, not once per event.
      requestAnimationFrame(() => {
        scheduled = false;
        if (!controller.signal.aborted) setTranscript(builder.snapshot());
      });
    };
    const follow = async () => {
      try {
        if (root) {
          builder.addMessages(await client.messages(sessionId, {}, { signal: controller.signal }));
          publish();
        }
        for await (const event of client.events(sessionId, {
          signal: controller.signal,
          untilRunEnds: runId,
        })) {
          if (builder.apply(event)) publish();
        }
        builder.ended = true;
      } catch (failure) {
        if (controller.signal.aborted) return;
        builder.error = describeError(failure);
      }
      publish();
    };
    void follow();
    return () => controller.abort();
  }, [client, runId, sessionId, root]);

  return transcript;
}
