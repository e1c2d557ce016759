import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

// Retry and fork (decision 0018): a new run continues what another recorded, and pays for nothing twice.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });
/** Five iterations: four tool calls, then the answer. The model's n-th reply is at script position n - 1. */
const fiveIterations: Script = { replies: [add(1, 1), add(2, 2), add(3, 3), add(4, 4), { text: 'done' }] };
/** The same, with the model's third request failing with a 503 on each of the step's 3 attempts. */
const outage: Script = {
  replies: [
    add(1, 1),
    add(2, 2),
    { ...add(3, 3), fail: [1, 2, 3].map(() => ({ kind: 'server_error' as const, status: 503 })) },
    add(4, 4),
    { text: 'done' },
  ],
};

function start(options: HarnessOptions): Harness {
  harness = new Harness(options);
  return harness;
}

/** A run failed by a provider outage at its third model request, and the script without the outage. */
async function failedByOutage(h: Harness): Promise<{ runId: string; sessionId: string }> {
  const worker = await h.startWorker();
  const started = await h.engine.startRun({ input: 'count up' });
  const failed = await h.engine.waitForRun(started.runId, { timeoutMs: 30_000 });
  expect(failed.status).toBe('failed');
  expect(failed.error?.code).toBe('model_server_error');
  await worker.close(2000);
  // The outage is over: a worker started now reads the script without it.
  writeFileSync(join(h.dir, 'script.json'), JSON.stringify(fiveIterations));
  return started;
}

/** The model calls as the scripted model logged them, with their script position. */
function calls(
  h: Harness,
): { run_id: string; agent: string; position: number; messages: { id: string; role: string }[] }[] {
  return h.modelCalls() as unknown as ReturnType<typeof calls>;
}

/** The ids of the messages a model call was sent, the system prompt left out. */
function sent(call: { messages: { id: string; role: string }[] }): string[] {
  return call.messages.filter((message) => message.role !== 'system').map((message) => message.id);
}

describe('retry', () => {
  it('continues a run failed by a provider outage: no recorded reply or tool result is asked again', async () => {
    const h = start({ script: outage });
    const { runId, sessionId } = await failedByOutage(h);
    const before = calls(h);
    // Two recorded replies, then three attempts of the third request, each refused.
    expect(before.map((call) => call.position)).toEqual([0, 1, 2, 2, 2]);

    await h.startWorker();
    const retry = await h.engine.retryRun(runId);
    expect(retry.sessionId).toBe(sessionId);
    const done = await h.engine.waitForRun(retry.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.result).toBe('done');
    expect(done.iteration).toBe(5);

    const after = calls(h).slice(before.length);
    expect(after.map((call) => [call.run_id, call.position])).toEqual([
      [retry.runId, 2],
      [retry.runId, 3],
      [retry.runId, 4],
    ]);
    // The retry's first request is the one the outage refused: the same chat, nothing asked again.
    expect(sent(after[0] ?? { messages: [] })).toEqual(sent(before[4] ?? { messages: [] }));

    const original = await h.engine.getRun(runId);
    expect(original?.status).toBe('failed');
    expect(original?.retried_by).toBe(retry.runId);
    expect(done.origin).toMatchObject({ kind: 'retry', run_id: runId, session_id: sessionId });
    const chat = await h.transcript(sessionId);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
    expect(chat.filter((message) => message.role === 'assistant')).toHaveLength(5);
    const events = await h.events(sessionId);
    const retryEvents = events.filter((event) => event.run_id === retry.runId).map((event) => event.kind);
    expect(retryEvents.slice(0, 3)).toEqual(['run_retried', 'run_started', 'agent_start']);
    expect(retryEvents.at(-1)).toBe('run_completed');
  });
});
