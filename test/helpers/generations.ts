import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { KeySpace } from '../../src/redis/keys.js';
import { waitFor } from './crash-scenario.js';
import { Harness, type WorkerProcess } from './harness.js';

// Two generations of workers on one Redis (decision 0031): the harness's own config (v2) has the agent
// `clerk`, and an older generation's (v1) lacks it.

export const clerkScript = {
  replies: [{ text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'five' }],
};

/** Waits are short here: a second of capability wait, a recheck every 1.5 s, a heartbeat window of 1 s. */
export const shortWaits = { capability_wait_s: 1, question_recheck_ms: 1_500, dead_worker_ms: 1_000 };

export function generationsHarness(): Harness {
  return new Harness({
    agents: [
      { name: 'agent', script: { replies: [{ text: 'hi' }] } },
      { name: 'clerk', script: clerkScript },
    ],
    worker: shortWaits,
  });
}

/** Config v1, an older generation's: the harness's own without the agent `clerk` and its provider. */
export function olderConfig(h: Harness): string {
  const config = JSON.parse(readFileSync(h.configPath, 'utf8'));
  config.agents = config.agents.filter((agent: { name: string }) => agent.name !== 'clerk');
  config.providers = config.providers.filter((provider: { name: string }) => provider.name !== 'model-clerk');
  const path = join(h.dir, 'v1.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

export async function started(...workers: WorkerProcess[]): Promise<void> {
  await waitFor(
    () => workers.every((process) => process.output().includes('worker started')),
    60_000,
    'the workers to start',
  );
}

/**
 * Once the run's first model call is in flight, SIGKILLs the worker that made it and waits for another to call
 * the model again (`withinMs`); returns that survivor, which the test checks took over.
 */
export async function killTheCaller(
  h: Harness,
  workers: readonly WorkerProcess[],
  withinMs: number,
): Promise<WorkerProcess> {
  await waitFor(() => h.modelCalls().length === 1, 60_000, 'the model call');
  const holder = h.modelCalls()[0]?.pid;
  const doomed = workers.find((worker) => worker.child.pid === holder);
  const survivor = workers.find((worker) => worker.child.pid !== holder);
  if (!doomed || !survivor) throw new Error(`no worker process has pid ${holder}`);
  await doomed.kill();
  await waitFor(() => h.modelCalls().length === 2, withinMs, 'the survivor to call the model again');
  expect(h.modelCalls()[1]?.pid).toBe(survivor.child.pid);
  return survivor;
}

export function spaceOf(h: Harness): KeySpace {
  return { prefix: h.prefix, shards: h.loaded.config.redis.shards };
}

export async function statusOf(h: Harness, runId: string): Promise<string | undefined> {
  return (await h.engine.getRun(runId))?.status;
}

export async function eventKinds(h: Harness, sessionId: string): Promise<string[]> {
  return (await h.events(sessionId)).map((event) => event.kind);
}

export const count = (kinds: readonly string[], kind: string) => kinds.filter((each) => each === kind).length;
