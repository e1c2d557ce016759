import { type ApiEngine, type RunWait, waitForRun } from '../../api/index.js';
import type { RatchetEvent } from '../../events/event.js';
import type { Logger } from '../../log/index.js';
import { sessionIdOfRun } from '../../workflows/index.js';

/** Sends one progress notification; `progress` increases with every call. */
export type ReportProgress = (progress: number, message: string) => Promise<void>;

export interface WaitWithProgressOptions {
  timeoutS: number;
  /** Aborted when the client cancels the request or goes away: the wait ends with the run as it is. */
  signal: AbortSignal;
  /** Absent when the client asked for no progress (no progressToken). */
  report: ReportProgress | undefined;
  /** A notification after this long without one, so a client's request timeout sees the wait is alive. */
  heartbeatMs: number;
  logger: Logger;
}

/**
 * `waitForRun`, reporting while it waits: one notification for each new event of the run's session (one
 * active run per session, so they are the run's and its children's), and a heartbeat when nothing happens.
 * Reporting is best effort: a failed notification or event read never fails the wait.
 */
export async function waitWithProgress(
  engine: ApiEngine,
  runId: string,
  options: WaitWithProgressOptions,
): Promise<RunWait> {
  const sessionId = sessionIdOfRun(runId);
  const { report } = options;
  // Not a run id: waitForRun says so.
  if (report === undefined || sessionId === undefined) {
    return waitForRun(engine, runId, { timeoutS: options.timeoutS, signal: options.signal });
  }
  const stop = new AbortController();
  const stopReporting = () => stop.abort();
  options.signal.addEventListener('abort', stopReporting, { once: true });
  const reporting = reportEvents(engine, sessionId, {
    report,
    signal: stop.signal,
    clientGone: options.signal,
    heartbeatMs: options.heartbeatMs,
    logger: options.logger,
  });
  try {
    return await waitForRun(engine, runId, { timeoutS: options.timeoutS, signal: options.signal });
  } finally {
    stop.abort();
    options.signal.removeEventListener('abort', stopReporting);
    await reporting;
  }
}

async function reportEvents(
  engine: ApiEngine,
  sessionId: string,
  options: {
    report: ReportProgress;
    /** Aborted when the wait ends. */
    signal: AbortSignal;
    clientGone: AbortSignal;
    heartbeatMs: number;
    logger: Logger;
  },
): Promise<void> {
  let progress = 0;
  let lastSentAt = Date.now();
  // Notifications go out one after the other, so their progress values arrive in increasing order.
  let sending = Promise.resolve();
  const send = (message: string) => {
    progress += 1;
    lastSentAt = Date.now();
    const value = progress;
    sending = sending
      .then(() => options.report(value, message))
      .catch((error: unknown) => options.logger.debug({ err: error }, 'progress notification not sent'));
  };
  const sendEvent = (event: RatchetEvent) => {
    const message = describeEvent(event);
    if (message !== undefined) send(message);
  };
  const heartbeat = setInterval(() => {
    if (Date.now() - lastSentAt >= options.heartbeatMs) send('waiting for the run to finish');
  }, options.heartbeatMs);
  try {
    // Only what happens from now on: a client that waits again is not told the same events twice.
    let last = await engine.lastEventId(sessionId);
    const events = engine.followEvents(sessionId, {
      ...(last === undefined ? {} : { after: last }),
      signal: options.signal,
    });
    for await (const event of events) {
      last = event.id;
      sendEvent(event);
    }
    // The wait saw the run finish; the events committed with its end may not have reached the follower yet.
    if (!options.clientGone.aborted) {
      const rest = await engine.readEvents(sessionId, {
        ...(last === undefined ? {} : { after: last }),
        count: 200,
      });
      for (const event of rest) sendEvent(event);
    }
  } catch (error) {
    if (!options.clientGone.aborted)
      options.logger.warn({ err: error }, 'wait_run stopped reporting progress');
  } finally {
    clearInterval(heartbeat);
    await sending;
  }
}

/** One short line per event a waiting client cares about; none for the pieces of a streamed reply. */
export function describeEvent(event: RatchetEvent): string | undefined {
  switch (event.kind) {
    case 'text_delta':
    case 'attempt_retried':
      return undefined;
    case 'message_added':
      return `${event.agent}: ${event.data.message.role} message added`;
    case 'tool_call_start':
      return `${event.agent}: calling ${event.data.name}`;
    case 'tool_call_end':
      return `${event.agent}: ${event.data.name} ${event.data.is_error ? 'failed' : 'returned'}`;
    case 'ask_user':
      return `${event.agent} asks (question ${event.data.question_id}): ${event.data.question}`;
    case 'progress':
      return `${event.agent}: ${event.data.message}`;
    case 'error':
      return `${event.agent}: ${event.data.step} attempt ${event.data.attempt} failed (${event.data.code})`;
    case 'waiting_for_worker':
      return `${event.agent}: waiting for a worker that has ${event.data.missing.join(', ')}`;
    case 'worker_found':
      return `${event.agent}: a worker with ${event.data.missing.join(', ')} took the run on`;
    case 'run_started':
    case 'agent_start':
    case 'agent_end':
    case 'file_change':
    case 'question_answered':
    case 'compaction':
    case 'loop_detected':
    case 'answer_rejected':
    case 'reflection':
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
    case 'run_retried':
    case 'run_forked':
      return `${event.agent}: ${event.kind.replaceAll('_', ' ')}`;
    default:
      // Every kind has its case above, so a new kind is a compile error here until it is described (or not).
      event satisfies never;
      return undefined;
  }
}
