import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// SIGKILL once a remembered approval has approved a call (decision 0046), before the call's intent: the
// decision is recorded, so the fresh worker reads it: no question is asked, the call runs once, and one event
// names the approval — even though the approval was revoked in between (decided once, never again).

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const chargeTwice: Script = {
  replies: [
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { text: 'done' },
  ],
};

describe('a remembered approval cut by a crash', () => {
  it('is read, not decided again, by the next worker (tool.after_remembered_approval)', async () => {
    harness = new Harness({
      script: chargeTwice,
      agent: { tools: { charge_card: { requires_approval: true } } },
    });
    const h = harness;
    const { runId, sessionId } = await h.engine.startRun({ input: 'charge twice' });
    const doomed = h.spawnWorker({ crashAt: 'tool.after_remembered_approval' });
    let questionId = '';
    await waitFor(
      async () => {
        questionId = (await h.engine.listQuestions(sessionId))[0]?.id ?? '';
        return questionId !== '';
      },
      30_000,
      'the first approval',
    );
    // Answered once the step is parked (a wake before that waits for the next recheck).
    await waitFor(
      async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
      30_000,
      'the run to wait for input',
    );
    await h.engine.respond(sessionId, questionId, { decision: 'approve', remember: 'arguments' });
    const exit = await waitForExit(doomed, 30_000);
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    expect(doomed.output()).toContain('crash point tool.after_remembered_approval reached');
    // Only the first call ran; the second was approved (recorded) and cut before its intent.
    expect(h.effects().map((effect) => effect.label)).toEqual(['charge 42']);

    // Revoked after the decision: the decision stands (recorded with the step).
    const [approval] = await h.engine.listApprovals(sessionId);
    await h.engine.revokeApproval(sessionId, approval?.key ?? '');

    const rescuer = h.spawnWorker();
    const run = await h.engine.waitForRun(runId, { timeoutMs: 45_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    expect((await rescuer.stop()).code, rescuer.output()).toBe(0);
    expect(h.effects().map((effect) => effect.label)).toEqual(['charge 42', 'charge 42']);
    const events = await h.events(sessionId);
    expect(events.filter((event) => event.kind === 'ask_user')).toHaveLength(1);
    const remembered = events.filter(
      (event) => event.kind === 'question_answered' && event.data.answered_by === 'remembered',
    );
    expect(remembered).toHaveLength(1);
    expect(remembered[0]?.data).toMatchObject({ remembered: { key: approval?.key } });
    expect(await h.engine.listQuestions(sessionId)).toEqual([]);
  });
});
