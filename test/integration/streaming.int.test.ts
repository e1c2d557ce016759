import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const script: Script = { replies: [{ text: 'A ratchet only turns forward.' }] };
const streaming = { options: { max_iterations: 5, stream: true } };

function deltasOf(events: readonly RatchetEvent[], attempt: number): string {
  return events
    .flatMap((event) =>
      event.kind === 'text_delta' && event.data.attempt === attempt ? [event.data.delta] : [],
    )
    .join('');
}

describe('streaming text deltas', () => {
  it('streams the reply as text_delta events before the recorded message', async () => {
    harness = new Harness({ script, agent: streaming });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'motto?' });
    expect((await harness.engine.waitForRun(runId)).status).toBe('completed');
    const events = await harness.events(sessionId);
    expect(deltasOf(events, 1)).toBe('A ratchet only turns forward.');
    const kinds = events.map((event) => event.kind);
    expect(kinds.lastIndexOf('text_delta')).toBeLessThan(kinds.lastIndexOf('message_added'));
    expect(kinds).not.toContain('attempt_retried');
  });

  it('announces a retried attempt, so a client drops the partial text of the one that died', async () => {
    harness = new Harness({ script, agent: streaming });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'motto?' });
    const doomed = harness.spawnWorker({ crashAt: 'iteration.after_model_call' });
    expect((await waitForExit(doomed, 30_000)).signal).toBe('SIGKILL');
    harness.spawnWorker();
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const events = await harness.events(sessionId);
    const retried = events.find((event) => event.kind === 'attempt_retried');
    expect(retried?.kind === 'attempt_retried' && retried.data).toEqual({ iteration: 1, attempt: 2 });
    expect(deltasOf(events, 1)).toBe('A ratchet only turns forward.');
    expect(deltasOf(events, 2)).toBe('A ratchet only turns forward.');
    // The chat holds the reply once: deltas never reach it.
    const chat = await harness.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'assistant')).toHaveLength(1);
  });
});
