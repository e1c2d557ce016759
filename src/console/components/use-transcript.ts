import { useEffect, useState } from 'preact/hooks';
import type { RatchetClient } from '../../client/index.js';
import { describeError } from './error-note.js';
import {
  addMessages,
  applyEvent,
  emptyTranscript,
  newTranscriptState,
  type Transcript,
  transcriptOf,
} from './transcript-state.js';

export type { RunningCall, Transcript, TranscriptNote } from './transcript-state.js';

/**
 * What a run said and did, live: the chat the run works on read once (GET /v1/runs/:id/messages: a root
 * run's session chat, where a fork's copied chat is; a child run's own chat), then the session's events
 * through the client's iterator until the run's terminal event (transcript-state.ts says what each does).
 */
export function useTranscript(client: RatchetClient, runId: string, sessionId: string | undefined) {
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);

  useEffect(() => {
    if (sessionId === undefined) return;
    const controller = new AbortController();
    const state = newTranscriptState(runId);
    let scheduled = false;
    const publish = () => {
      if (scheduled || controller.signal.aborted) return;
      scheduled = true;
      // Many events arrive at once from the backlog: render once per frame, not once per event.
      requestAnimationFrame(() => {
        scheduled = false;
        if (!controller.signal.aborted) setTranscript(transcriptOf(state));
      });
    };
    const follow = async () => {
      try {
        addMessages(state, (await client.runMessages(runId, {}, { signal: controller.signal })).messages);
        publish();
        for await (const event of client.events(sessionId, {
          signal: controller.signal,
          untilRunEnds: runId,
        })) {
          if (applyEvent(state, event)) publish();
        }
        state.ended = true;
      } catch (failure) {
        if (controller.signal.aborted) return;
        state.error = describeError(failure);
      }
      publish();
    };
    void follow();
    return () => controller.abort();
  }, [client, runId, sessionId]);

  return transcript;
}
