import type { WaitStore } from '../tools/index.js';
import type { RedisClient } from './connection.js';
import { eventBusKeys, type KeySpace, runKeys } from './keys.js';
import { runScript } from './scripts.js';

/** A waiter of an event name, as the event keys list it: the step to wake. */
export interface EventWaiter {
  sessionId: string;
  jobId: string;
}

function waiterMember(sessionId: string, jobId: string): string {
  return `${sessionId} ${jobId}`;
}

function waiterOf(member: string): EventWaiter | undefined {
  const space = member.indexOf(' ');
  if (space < 1) return undefined;
  return { sessionId: member.slice(0, space), jobId: member.slice(space + 1) };
}

/**
 * The `waits` toolbox's port (wait-begin.lua, wait-settle.lua) for the runs of one session: their waits and
 * signals under the session's hash tag, the deployment's events and waiters under their own.
 */
export function redisWaits(redis: RedisClient, space: KeySpace, sessionId: string): WaitStore {
  const bus = eventBusKeys(space);
  return {
    async beginWait(input) {
      const keys = runKeys(space, sessionId, input.runId);
      const [code, record, ...signals] = await runScript(
        redis,
        'wait-begin',
        [keys.run, keys.waits, keys.signals],
        [input.callKey, input.recordJson, input.jobId, input.event],
      );
      if (code !== 'OK') return { kind: 'run_finished' };
      return { kind: 'open', recordJson: record ?? '', signals };
    },
    async settleWait(input) {
      const keys = runKeys(space, sessionId, input.runId);
      const [code, record] = await runScript(
        redis,
        'wait-settle',
        [keys.run, keys.waits],
        [input.callKey, input.recordJson, input.eventKey ?? '', input.jobId],
      );
      if (code === 'SETTLED') return { kind: 'settled', recordJson: record ?? '' };
      if (code === 'TAKEN') return { kind: 'taken' };
      if (code === 'NO_WAIT') throw new Error(`no wait is recorded for call ${input.callKey}`);
      return { kind: 'run_finished' };
    },
    async listenForEvent({ event, jobId, deadlineMs }) {
      await redis.zadd(bus.waiters(event), Math.ceil(deadlineMs), waiterMember(sessionId, jobId));
    },
    async stopListening({ event, jobId }) {
      await redis.zrem(bus.waiters(event), waiterMember(sessionId, jobId));
    },
    async recentEvents(event, { after, limit }) {
      const start = after === undefined ? '-' : `(${after}`;
      const entries = await redis.xrange(bus.stream(event), start, '+', 'COUNT', limit);
      const events = entries.flatMap(([, fields]) => {
        const index = fields.indexOf('event');
        const json = index >= 0 ? fields[index + 1] : undefined;
        return json === undefined ? [] : [json];
      });
      const last = entries.at(-1);
      return { events, next: entries.length === limit && last ? last[0] : null };
    },
  };
}

export interface PublishedEvent {
  duplicate: boolean;
  waiters: EventWaiter[];
}

/** Records an event sent to the deployment, once per id (event-publish.lua), and lists its waiters. */
export async function publishEvent(
  redis: RedisClient,
  space: KeySpace,
  input: {
    id: string;
    event: string;
    entryJson: string;
    nowMs: number;
    retentionMs: number;
    maxKept: number;
  },
): Promise<PublishedEvent> {
  const bus = eventBusKeys(space);
  const [code, _entry, ...members] = await runScript(
    redis,
    'event-publish',
    [bus.ids, bus.idTimes, bus.stream(input.event), bus.waiters(input.event), bus.names],
    [
      input.id,
      input.entryJson,
      input.nowMs,
      input.retentionMs,
      input.maxKept,
      input.event,
      bus.streamPrefix,
      bus.waitersPrefix,
    ],
  );
  const waiters = members.flatMap((member) => {
    const waiter = waiterOf(member);
    return waiter ? [waiter] : [];
  });
  return { duplicate: code === 'DUPLICATE', waiters };
}

export type SignalResult =
  | { kind: 'sent' | 'duplicate'; jobIds: string[] }
  | { kind: 'full'; max: number }
  | { kind: 'no_run' }
  | { kind: 'run_finished'; status: string };

/** Keeps a signal for one run, once per id (run-signal.lua), and lists the run's waiting steps. */
export async function signalRun(
  redis: RedisClient,
  space: KeySpace,
  input: { sessionId: string; runId: string; id: string; signalJson: string; maxSignals: number },
): Promise<SignalResult> {
  const keys = runKeys(space, input.sessionId, input.runId);
  const [code, ...rest] = await runScript(
    redis,
    'run-signal',
    [keys.run, keys.waits, keys.signals],
    [input.id, input.signalJson, input.maxSignals],
  );
  if (code === 'OK' || code === 'DUPLICATE')
    return { kind: code === 'OK' ? 'sent' : 'duplicate', jobIds: rest };
  if (code === 'FULL') return { kind: 'full', max: Number(rest[0]) };
  if (code === 'RUN_FINISHED') return { kind: 'run_finished', status: rest[0] ?? '' };
  return { kind: 'no_run' };
}

/** The wait records of a run (JSON), for its view: what it waits for and until when. */
export async function readRunWaits(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
): Promise<string[]> {
  const fields = await redis.hgetall(runKeys(space, sessionId, runId).waits);
  return Object.entries(fields).flatMap(([field, json]) => (field.startsWith('wait:') ? [json] : []));
}
