import { expect } from 'vitest';
import type { Script } from '../../src/models/index.js';
import {
  Harness,
  type HarnessOptions,
  normalizeEvents,
  normalizeTranscript,
  type WorkerProcess,
} from './harness.js';

/** What else a scenario's harness is built with (its agent's effects, its provider's context window). */
export type ScenarioOptions = Omit<HarnessOptions, 'script'>;

export interface Reference {
  transcript: unknown[];
  events: string[];
  modelCalls: number;
  effects: string[];
}

/** The scenario without faults, run by an in-process worker: the oracle for every faulted run. */
export async function referenceRun(
  script: Script,
  input: string,
  options: ScenarioOptions = {},
): Promise<Reference> {
  const harness = new Harness({ ...options, script });
  try {
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    return {
      transcript: normalizeTranscript(await harness.transcript(sessionId), runId),
      events: normalizeEvents(await harness.events(sessionId), runId),
      modelCalls: harness.modelCalls().length,
      effects: harness.effects().map((effect) => effect.label),
    };
  } finally {
    await harness.close();
  }
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function waitForExit(worker: WorkerProcess, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`worker did not exit within ${timeoutMs} ms:\n${worker.output()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([worker.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface FaultedOutcome {
  harness: Harness;
  runId: string;
  sessionId: string;
  kills: number;
}

/**
 * Runs the scenario in a child worker armed with a crash point, checks it died there by SIGKILL, then lets a
 * fresh worker process finish the run.
 */
export async function crashAndTakeOver(
  script: Script,
  input: string,
  crashAt: string,
  track: (harness: Harness) => void,
  options: ScenarioOptions = {},
): Promise<FaultedOutcome> {
  const harness = new Harness({ ...options, script });
  // Handed over before anything can fail, so a failing test still stops its worker processes.
  track(harness);
  const { runId, sessionId } = await harness.engine.startRun({ input });
  const doomed = harness.spawnWorker({ crashAt });
  const exit = await waitForExit(doomed, 30_000);
  expect(exit.signal, `worker should die at ${crashAt}:\n${doomed.output()}`).toBe('SIGKILL');
  expect(doomed.output()).toContain(`crash point ${crashAt.split('@')[0]} reached`);
  const rescuer = harness.spawnWorker();
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 45_000 });
  expect(run.status, `run after ${crashAt}:\n${rescuer.output()}`).toBe('completed');
  const stopped = await rescuer.stop();
  expect(stopped.code, rescuer.output()).toBe(0);
  return { harness, runId, sessionId, kills: 1 };
}

/** The oracle: same transcript and events as without faults, nothing duplicated, model calls ≤ ref + kills. */
export async function expectSameAsReference(outcome: FaultedOutcome, reference: Reference): Promise<void> {
  const { harness, runId, sessionId } = outcome;
  const chat = await harness.transcript(sessionId);
  const events = await harness.events(sessionId);
  expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  expect(normalizeTranscript(chat, runId)).toEqual(reference.transcript);
  expect(normalizeEvents(events, runId)).toEqual(reference.events);
  expect(harness.modelCalls().length).toBeLessThanOrEqual(reference.modelCalls + outcome.kills);
  expect(harness.modelCalls().length).toBeGreaterThanOrEqual(reference.modelCalls);
}
