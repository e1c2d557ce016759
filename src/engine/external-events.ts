import { randomBytes } from 'node:crypto';
import { RatchetError } from '../errors/index.js';
import { publishEvent, signalRun } from '../redis/wait-store.js';
import { externalEventLimits } from '../schemas/index.js';
import type { KeptEvent } from '../tools/index.js';
import { sessionIdOfRun } from '../workflows/index.js';
import type { ExternalEventSettings } from './engine-options.js';
import type { EngineParts } from './engine-parts.js';
import { startTriggeredRun, type TriggeredRun } from './triggered-runs.js';

export type { ExternalEventSettings, TriggeredRun };

export const defaultExternalEventSettings: ExternalEventSettings = {
  retentionS: 3_600,
  maxKeptPerEvent: 1_000,
  triggers: [],
};

export interface SentEvent {
  event: string;
  payload?: unknown;
  /** The same id twice delivers once; a new one is made when absent. */
  id?: string | undefined;
}

export interface PublishedEventResult {
  id: string;
  duplicate: boolean;
  /** Steps waiting for the event's name that were woken (each looks, and takes it when it matches). */
  woken: number;
  runs: TriggeredRun[];
}

function newEventId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/**
 * Sends an event to the deployment: kept for `events.retention_s` for every wait of its name, once per id; the
 * waiting steps are woken, and each trigger of its name starts its run (once per event id, however often the
 * event is sent again, so a client may send it again until it is acknowledged).
 */
export async function sendEvent(parts: EngineParts, sent: SentEvent): Promise<PublishedEventResult> {
  const settings = parts.options.externalEvents ?? defaultExternalEventSettings;
  const id = sent.id ?? newEventId('evt');
  const now = parts.now();
  const retentionMs = settings.retentionS * 1000;
  const entry: KeptEvent = {
    v: 1,
    id,
    event: sent.event,
    payload: sent.payload ?? null,
    at: now.toISOString(),
    expires_ms: now.getTime() + retentionMs,
  };
  const published = await publishEvent(parts.redis, parts.space, {
    id,
    event: sent.event,
    entryJson: JSON.stringify(entry),
    nowMs: now.getTime(),
    retentionMs,
    maxKept: settings.maxKeptPerEvent,
  });
  const runs: TriggeredRun[] = [];
  for (const [index, trigger] of settings.triggers.entries()) {
    if (trigger.event !== sent.event) continue;
    runs.push(await startTriggeredRun(parts, { index, trigger, eventId: id, entry }));
  }
  // Woken a batch at a time: a popular event may have thousands of waiters.
  for (let start = 0; start < published.waiters.length; start += 50) {
    await Promise.all(
      published.waiters
        .slice(start, start + 50)
        .map((waiter) => parts.queues.wake(parts.store.shardOf(waiter.sessionId), waiter.jobId)),
    );
  }
  return { id, duplicate: published.duplicate, woken: published.waiters.length, runs };
}

export interface SignalResult {
  id: string;
  duplicate: boolean;
  woken: number;
}

/** Sends a signal to one run: kept with it for its waits (once per id), and its waiting steps woken. */
export async function sendSignal(parts: EngineParts, runId: string, sent: SentEvent): Promise<SignalResult> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) throw new RatchetError('run_not_found', `unknown run ${runId}`);
  const id = sent.id ?? newEventId('sig');
  const signal: KeptEvent = {
    v: 1,
    id,
    event: sent.event,
    payload: sent.payload ?? null,
    at: parts.now().toISOString(),
  };
  const result = await signalRun(parts.redis, parts.space, {
    sessionId,
    runId,
    id,
    signalJson: JSON.stringify(signal),
    maxSignals: externalEventLimits.signalsPerRun,
  });
  switch (result.kind) {
    case 'no_run':
      throw new RatchetError('run_not_found', `unknown run ${runId}`);
    case 'run_finished':
      throw new RatchetError('run_finished', `run ${runId} is already ${result.status}`, {
        details: { status: result.status },
      });
    case 'full':
      throw new RatchetError(
        'signals_full',
        `run ${runId} keeps ${result.max} signals, the most a run may: let its waits receive them first`,
        { details: { limit: result.max } },
      );
    case 'sent':
    case 'duplicate':
      for (const jobId of result.jobIds) await parts.queues.wake(parts.store.shardOf(sessionId), jobId);
      return { id, duplicate: result.kind === 'duplicate', woken: result.jobIds.length };
  }
}
