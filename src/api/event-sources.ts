import { type RatchetEvent, runEndKinds } from '../events/event.js';
import type { ApiEngine } from './api-engine.js';

const pageSize = 200;

export interface SessionEventsOptions {
  after: string | undefined;
  /** true: every event, then each new one, until the client goes away. */
  follow: boolean;
  /** With follow false: the stream ends after this run's terminal event; null: after the backlog. */
  activeRunId: string | null;
  /** The backlog's first page, when the caller has read it already. */
  firstPage?: RatchetEvent[];
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/**
 * What an event stream sends. Each source reads Redis for its own client only, and only when the client
 * has taken the previous event. A following source takes its follower's place now: this throws
 * `too_many_followers` before anything is sent, so the caller can still answer 503.
 */
export function sessionEvents(
  engine: ApiEngine,
  sessionId: string,
  options: SessionEventsOptions,
): AsyncGenerator<RatchetEvent> {
  const { after, signal } = options;
  if (options.follow) return engine.followEvents(sessionId, withAfter({ after, signal }));
  if (options.activeRunId === null) {
    return backlogEvents(engine, sessionId, {
      after,
      signal,
      ...(options.firstPage ? { firstPage: options.firstPage } : {}),
    });
  }
  const followed = engine.followEvents(sessionId, withAfter({ after, signal }));
  return eventsUntilRunEnds(followed, options.activeRunId);
}

/** The events in the log now (after `after`), page by page; ends at the first short page. */
async function* backlogEvents(
  engine: ApiEngine,
  sessionId: string,
  options: { after: string | undefined; firstPage?: RatchetEvent[]; signal: AbortSignal },
): AsyncGenerator<RatchetEvent> {
  let page = options.firstPage ?? (await engine.readEvents(sessionId, pageOptions(options.after)));
  for (;;) {
    yield* page;
    const last = page.at(-1);
    if (page.length < pageSize || last === undefined || options.signal.aborted) return;
    page = await engine.readEvents(sessionId, pageOptions(last.id));
  }
}

/** The backlog's first page (the route answers 204 when it is empty and no run is active). */
export function readBacklogPage(
  engine: ApiEngine,
  sessionId: string,
  after: string | undefined,
): Promise<RatchetEvent[]> {
  return engine.readEvents(sessionId, pageOptions(after));
}

/** The followed events until the run's terminal event (always the run's last), then the end. */
async function* eventsUntilRunEnds(
  followed: AsyncGenerator<RatchetEvent>,
  runId: string,
): AsyncGenerator<RatchetEvent> {
  for await (const event of followed) {
    yield event;
    if (event.run_id === runId && runEndKinds.includes(event.kind)) return;
  }
}

function withAfter(options: { after: string | undefined; signal: AbortSignal }): {
  after?: string;
  signal: AbortSignal;
} {
  return options.after === undefined
    ? { signal: options.signal }
    : { after: options.after, signal: options.signal };
}

function pageOptions(after: string | undefined): { after?: string; count: number } {
  return after === undefined ? { count: pageSize } : { after, count: pageSize };
}
