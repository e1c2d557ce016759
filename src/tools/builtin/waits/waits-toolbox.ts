import { z } from 'zod';
import {
  eventNameSchema,
  jsonBytes,
  externalEventLimits as limits,
  parseJsonRecord,
} from '../../../schemas/index.js';
import { defineTool, type JsonValue, type ToolContext } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { payloadMatches } from './event-match.js';
import {
  type EventWaitRecord,
  type KeptEvent,
  keptEventSchema,
  type SleepRecord,
  type WaitRecord,
  waitRecordSchema,
} from './wait-store.js';

/** An event a wait may receive: sent to the deployment (`e:` + id) or to the run as a signal (`s:` + id). */
interface Candidate {
  key: string;
  source: 'event' | 'signal';
  kept: KeptEvent;
}

function readWait(json: string): WaitRecord {
  return parseJsonRecord(waitRecordSchema, json, 'wait record');
}

function receivedResult(record: EventWaitRecord): JsonValue {
  if (record.status === 'timed_out') {
    return {
      received: false,
      timed_out: true,
      event: record.event,
      note: `no "${record.event}" event came before the timeout`,
    };
  }
  return {
    received: true,
    event: record.event,
    id: record.event_id,
    source: record.source,
    sent_at: record.sent_at,
    payload: (record.payload ?? null) as JsonValue,
  };
}

/** Events of a name read at a time: a wait stops at the first page that holds one it can receive. */
const eventsPerPage = 100;

/** Whether a kept event or signal fits the wait: its name, still kept, and its payload contains the match. */
function fitsWait(record: EventWaitRecord, nowMs: number) {
  return (kept: KeptEvent) =>
    kept.event === record.event &&
    (kept.expires_ms === undefined || kept.expires_ms > nowMs) &&
    payloadMatches(kept.payload, record.match ?? undefined);
}

/**
 * The events and signals that fit a wait, page by page: the run's signals first (oldest first), then the
 * kept events of the name (oldest first). `offer` is called with each page and says when to stop; the scan
 * never holds more than a page of events.
 */
async function scanCandidates(
  context: ToolContext,
  record: EventWaitRecord,
  signals: readonly string[],
  offer: (candidates: Candidate[]) => Promise<boolean>,
): Promise<void> {
  const fits = fitsWait(record, context.session.now().getTime());
  const sent = signals
    .map((json) => parseJsonRecord(keptEventSchema, json, 'signal'))
    .filter(fits)
    .map((kept): Candidate => ({ key: `s:${kept.id}`, source: 'signal', kept }));
  if (sent.length > 0 && (await offer(sent))) return;
  let after: string | undefined;
  for (;;) {
    const page = await context.session.data.recentEvents(record.event, { after, limit: eventsPerPage });
    const events = page.events
      .map((json) => parseJsonRecord(keptEventSchema, json, 'event'))
      .filter(fits)
      .map((kept): Candidate => ({ key: `e:${kept.id}`, source: 'event', kept }));
    if (events.length > 0 && (await offer(events))) return;
    if (page.next === null) return;
    after = page.next;
  }
}

/** Offers what fits the wait in turn; the first the run has not received yet settles it. */
async function receive(
  context: ToolContext,
  record: EventWaitRecord,
  signals: readonly string[],
): Promise<EventWaitRecord | undefined> {
  const { session } = context;
  let received: EventWaitRecord | undefined;
  await scanCandidates(context, record, signals, async (candidates) => {
    for (const candidate of candidates) {
      const settled: EventWaitRecord = {
        ...record,
        status: 'received',
        source: candidate.source,
        event_id: candidate.kept.id,
        payload: candidate.kept.payload ?? null,
        sent_at: candidate.kept.at,
        settled_at: session.now().toISOString(),
      };
      const result = await session.data.settleWait({
        runId: context.runId,
        callKey: context.idempotencyKey,
        jobId: session.jobId,
        eventKey: candidate.key,
        recordJson: JSON.stringify(settled),
      });
      if (result.kind === 'run_finished') throw new Error('the run is finished');
      if (result.kind === 'settled') {
        received = eventWait(readWait(result.recordJson));
        return true;
      }
    }
    return false;
  });
  return received;
}

function eventWait(record: WaitRecord): EventWaitRecord {
  if (record.kind !== 'event') throw new Error('this call is recorded as a sleep, not a wait for an event');
  return record;
}

function sleepOf(record: WaitRecord): SleepRecord {
  if (record.kind !== 'sleep') throw new Error('this call is recorded as a wait for an event, not a sleep');
  return record;
}

const matchSchema = z
  .record(z.string(), z.unknown())
  .refine((match) => jsonBytes(match) <= limits.matchBytes, {
    error: `match is at most ${limits.matchBytes} bytes as JSON: match on fewer keys`,
  })
  .optional()
  .describe(
    `only an event whose payload contains these keys with these values (nested objects compared key by key; at most ${limits.matchBytes} bytes as JSON)`,
  );

const waitForEvent = defineTool({
  name: 'wait_for_event',
  description:
    'Waits until an event with this name is sent to Ratchet (by another system: a payment settled, a build ' +
    'finished, a reply came), then returns its payload. An event sent shortly before the wait began counts. ' +
    'Waiting holds no resources and makes no model call; after timeout_s the result says it timed out.',
  inputSchema: z.strictObject({
    event: eventNameSchema.describe('the name of the event to wait for'),
    match: matchSchema,
    timeout_s: z
      .number()
      .positive()
      .max(limits.maxWaitS, { error: `at most ${limits.maxWaitS} (30 days)` })
      .describe(`give up after this many seconds (at most ${limits.maxWaitS})`),
  }),
  // Only looks: every execution of the call finds the same recorded wait and, once received, the same event.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const { session } = context;
    const nowMs = session.now().getTime();
    const fresh: EventWaitRecord = {
      v: 1,
      kind: 'event',
      event: input.event,
      match: input.match ?? null,
      deadline_ms: Math.ceil(nowMs + input.timeout_s * 1000),
      started_at: session.now().toISOString(),
      status: 'waiting',
      source: null,
      event_id: null,
      payload: null,
      sent_at: null,
      settled_at: null,
    };
    const look = async () => {
      const begun = await session.data.beginWait({
        runId: context.runId,
        callKey: context.idempotencyKey,
        jobId: session.jobId,
        event: input.event,
        recordJson: JSON.stringify(fresh),
      });
      if (begun.kind === 'run_finished') throw new Error('the run is finished');
      return { record: eventWait(readWait(begun.recordJson)), signals: begun.signals };
    };
    const { record, signals } = await look();
    const { event } = record;
    if (record.status !== 'waiting') return receivedResult(record);
    // Listed before looking back: an event sent after this either is found by the look or wakes the step.
    await session.data.listenForEvent({ event, jobId: session.jobId, deadlineMs: record.deadline_ms });
    const received = await receive(context, record, signals);
    if (received) {
      await session.data.stopListening({ event, jobId: session.jobId });
      return receivedResult(received);
    }
    if (session.now().getTime() >= record.deadline_ms) {
      const timedOut: EventWaitRecord = {
        ...record,
        status: 'timed_out',
        settled_at: session.now().toISOString(),
      };
      const settled = await session.data.settleWait({
        runId: context.runId,
        callKey: context.idempotencyKey,
        jobId: session.jobId,
        eventKey: null,
        recordJson: JSON.stringify(timedOut),
      });
      if (settled.kind !== 'settled') throw new Error('the run is finished');
      await session.data.stopListening({ event, jobId: session.jobId });
      return receivedResult(eventWait(readWait(settled.recordJson)));
    }
    // Parked until a publish or a signal wakes the step, the deadline, or the recheck (a lost wake-up). One
    // that came while the step was still running is caught by the check after parking.
    const came = async () => {
      const again = await look();
      if (again.record.status !== 'waiting') return true;
      // Receiving here (once, as any look would) rather than asking whether something fits: an event the run
      // received already fits too, and would wake the step again and again.
      return (await receive(context, again.record, again.signals)) !== undefined;
    };
    throw await session.park(
      Math.min(record.deadline_ms, nowMs + session.recheckMs),
      `event "${event}"`,
      came,
    );
  },
});

const sleep = defineTool({
  name: 'sleep',
  description:
    'Pauses the run for a number of seconds or until a time (ISO 8601), holding no resources and making no ' +
    "model call meanwhile, then returns. It may not sleep past the run's deadline.",
  inputSchema: z
    .strictObject({
      seconds: z
        .number()
        .positive()
        .max(limits.maxSleepS, { error: `at most ${limits.maxSleepS} (30 days)` })
        .optional()
        .describe(`how long to sleep (at most ${limits.maxSleepS} seconds)`),
      until: z.iso
        .datetime({ offset: true })
        .optional()
        .describe('the time to wake (ISO 8601, e.g. 2030-01-01T09:00:00Z), at most 30 days ahead'),
    })
    .refine((input) => (input.seconds === undefined) !== (input.until === undefined), {
      error: 'give either seconds or until, not both and not neither',
    }),
  // Only looks: every execution of the call finds the wake time its first look recorded.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const { session } = context;
    const nowMs = session.now().getTime();
    const untilMs = Math.ceil(
      input.seconds === undefined ? Date.parse(input.until ?? '') : nowMs + input.seconds * 1000,
    );
    const fresh: SleepRecord = {
      v: 1,
      kind: 'sleep',
      until_ms: untilMs,
      started_at: session.now().toISOString(),
    };
    const begun = await session.data.beginWait({
      runId: context.runId,
      callKey: context.idempotencyKey,
      jobId: session.jobId,
      event: '',
      recordJson: JSON.stringify(fresh),
    });
    if (begun.kind === 'run_finished') throw new Error('the run is finished');
    const record = sleepOf(readWait(begun.recordJson));
    const wakeAt = new Date(record.until_ms).toISOString();
    // Checked on the recorded sleep, so every execution of the call decides alike.
    if (record.until_ms - Date.parse(record.started_at) > limits.maxSleepS * 1000)
      throw new Error(`until ${wakeAt} is more than 30 days ahead: sleep for less`);
    if (session.deadlineMs !== undefined && record.until_ms > session.deadlineMs) {
      throw new Error(
        `the run's deadline is ${new Date(session.deadlineMs).toISOString()}: a sleep may not end after ` +
          'it; sleep for less',
      );
    }
    if (nowMs >= record.until_ms) return { slept: true, woke_at: session.now().toISOString(), until: wakeAt };
    throw await session.park(record.until_ms, `sleep until ${wakeAt}`);
  },
});

export const waitsToolboxName = 'waits';

/** `waits`: wait for an event from outside (wait_for_event) or for a time (sleep), holding no worker. */
export function waitsToolbox(): ToolBox {
  return createToolBox(waitsToolboxName, [waitForEvent, sleep]);
}
