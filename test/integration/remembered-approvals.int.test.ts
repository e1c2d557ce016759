import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { sessionDataKeys } from '../../src/redis/keys.js';
import {
  maxRememberedApprovals,
  rememberedApprovalOf,
} from '../../src/workflows/remembered-approval-match.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Three calls of charge_card, one per reply: 42, 42 again, then 7. */
const chargeThrice: Script = {
  replies: [
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    { tool_calls: [{ name: 'charge_card', arguments: { amount: 7 } }] },
    { text: 'done' },
  ],
};
const approvals = { tools: { charge_card: { requires_approval: true } } };

/** The next pending approval of the run (its id and the arguments it asks about). */
async function nextApproval(h: Harness, runId: string, sessionId: string, answered: Set<string>) {
  let found: { id: string; arguments: string } | undefined;
  await waitFor(
    async () => {
      const pending = (await h.engine.listQuestions(sessionId)).find(
        (question) => question.run_id === runId && question.kind === 'approval' && !answered.has(question.id),
      );
      found = pending?.tool ? { id: pending.id, arguments: pending.tool.arguments } : undefined;
      return found !== undefined;
    },
    30_000,
    'an approval question',
  );
  if (!found) throw new Error('no approval');
  // Answered once the step is parked (a wake before that waits for the next recheck).
  await waitFor(
    async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
    30_000,
    'the run to wait for input',
  );
  answered.add(found.id);
  return found;
}

describe('remembered approvals', () => {
  it("an arguments approval skips the same call, asks for other arguments, and is the session's only", async () => {
    harness = new Harness({ script: chargeThrice, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    const answered = new Set<string>();
    const first = await nextApproval(harness, runId, sessionId, answered);
    expect(first.arguments).toBe('{"amount":42}');
    await harness.engine.respond(sessionId, first.id, { decision: 'approve', remember: 'arguments' });
    // The second call (the same arguments) is not asked; the third (other arguments) is.
    const third = await nextApproval(harness, runId, sessionId, answered);
    expect(third.arguments).toBe('{"amount":7}');
    expect(harness.effects().map((effect) => effect.label)).toEqual(['charge 42', 'charge 42']);
    await harness.engine.respond(sessionId, third.id, 'approve');
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(harness.effects().map((effect) => effect.label)).toEqual(['charge 42', 'charge 42', 'charge 7']);

    const events = await harness.events(sessionId);
    expect(events.filter((event) => event.kind === 'ask_user')).toHaveLength(2);
    const remembered = events.filter(
      (event) => event.kind === 'question_answered' && event.data.answered_by === 'remembered',
    );
    expect(remembered).toHaveLength(1);
    const [approval] = await harness.engine.listApprovals(sessionId);
    expect(approval).toMatchObject({ tool: 'charge_card', scope: 'arguments', arguments: '{"amount":42}' });
    expect(remembered[0]?.data).toMatchObject({ remembered: { key: approval?.key, scope: 'arguments' } });

    // Session B: the same call is asked (a remembered approval is its session's only).
    const other = await harness.engine.startRun({ input: 'charge' });
    const againInB = await nextApproval(harness, other.runId, other.sessionId, answered);
    expect(againInB.arguments).toBe('{"amount":42}');
    expect(await harness.engine.listApprovals(other.sessionId)).toEqual([]);
  });

  it('a tool approval covers every call of the tool; revoked, the next call is asked again', async () => {
    // The session's second run: one more call of the tool.
    const replies = [...(chargeThrice.replies ?? []), ...(chargeThrice.replies ?? []).slice(0, 1)];
    harness = new Harness({ script: { replies }, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    const answered = new Set<string>();
    const first = await nextApproval(harness, runId, sessionId, answered);
    await harness.engine.respond(sessionId, first.id, { decision: 'approve', remember: 'tool' });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(harness.effects()).toHaveLength(3);
    const [approval] = await harness.engine.listApprovals(sessionId);
    expect(approval).toMatchObject({ scope: 'tool', arguments: null, path_prefix: null });

    await harness.engine.revokeApproval(sessionId, approval?.key ?? '');
    expect(await harness.engine.listApprovals(sessionId)).toEqual([]);
    await expect(harness.engine.revokeApproval(sessionId, approval?.key ?? '')).rejects.toMatchObject({
      code: 'approval_not_found',
    });
    const next = await harness.engine.startRun({ input: 'charge', sessionId });
    const asked = await nextApproval(harness, next.runId, sessionId, answered);
    expect(asked.arguments).toBe('{"amount":42}');
  });

  it('refuses remember with a rejection or edited arguments, naming the field', async () => {
    harness = new Harness({ script: chargeThrice, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    const first = await nextApproval(harness, runId, sessionId, new Set());
    for (const response of [
      { decision: 'reject' as const, remember: 'tool' as const },
      { decision: 'approve' as const, remember: 'tool' as const, arguments: { amount: 1 } },
    ]) {
      await expect(harness.engine.respond(sessionId, first.id, response)).rejects.toMatchObject({
        code: 'invalid_response',
        message: expect.stringContaining('remember'),
      });
    }
    expect(await harness.engine.listApprovals(sessionId)).toEqual([]);
  });

  it('refuses the 101st remembered approval of a session, writing nothing, and says how to go on', async () => {
    harness = new Harness({ script: chargeThrice, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    const first = await nextApproval(harness, runId, sessionId, new Set());
    // The session holds the most remembered approvals already (of other calls).
    const key = sessionDataKeys(harness.engine.space, sessionId).approvals;
    for (let index = 0; index < maxRememberedApprovals; index += 1) {
      const rule = rememberedApprovalOf(
        'arguments',
        {
          id: `q-${index}`,
          agent: 'agent',
          tool: { name: 'charge_card', arguments: `{"amount":${1000 + index}}` },
        },
        new Date().toISOString(),
      );
      await harness.redis.hset(key, rule.key, JSON.stringify(rule));
    }
    await expect(
      harness.engine.respond(sessionId, first.id, { decision: 'approve', remember: 'tool' }),
    ).rejects.toMatchObject({
      code: 'invalid_response',
      message: expect.stringMatching(/remember: .*100.*revoke/),
    });
    expect(await harness.engine.listApprovals(sessionId)).toHaveLength(maxRememberedApprovals);
    // Nothing was written: the question is still open, and answers without remember.
    expect((await harness.engine.listQuestions(sessionId)).map((question) => question.id)).toEqual([
      first.id,
    ]);
    await harness.engine.respond(sessionId, first.id, 'approve');
    await waitFor(() => harness?.effects().length === 1, 30_000, 'the approved call');
  });
});
