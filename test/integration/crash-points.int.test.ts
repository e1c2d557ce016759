import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { type CrashPointName, crashPointNames } from '../../src/workflows/crash-points.js';
import {
  crashAndTakeOver,
  expectSameAsReference,
  type Reference,
  referenceRun,
} from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';

/** Two iterations with tools (parallel calls, then an idempotent effect), then a final answer. */
const script: Script = {
  replies: [
    {
      text: 'step one',
      tool_calls: [
        { name: 'add', arguments: { a: 2, b: 3 } },
        { name: 'slow_echo', arguments: { text: 'echo', delay_ms: 50 } },
      ],
      delay_ms: 30,
    },
    {
      text: 'step two',
      tool_calls: [{ name: 'send_email', arguments: { to: 'ada@example.com' } }],
      delay_ms: 30,
    },
    { text: 'all done', delay_ms: 30 },
  ],
};

/**
 * The results of an iteration's tool calls are appended by the commit of the last call to finish; the
 * iteration's own results commit is the fallback for a call that left nothing (its job was lost). Its two
 * crash points are exercised by the scenario that reaches it, in tool-job-failure.int.test.ts.
 */
const fallbackOnly: readonly CrashPointName[] = [
  'iteration.before_results_commit',
  'iteration.after_results_commit',
];
/** A compaction's points are reached only by a run that compacts: effects-crash.int.test.ts covers them. */
const compactionOnly: readonly CrashPointName[] = crashPointNames.filter((point) =>
  point.includes('_summary_'),
);
/** A supervisor's sub-goal commit: test/orchestration/supervisor-crash.int.test.ts covers it. */
const supervisorOnly: readonly CrashPointName[] = crashPointNames.filter((point) =>
  point.includes('_goals_'),
);
/** A steered message's commit is reached only by a run steered: busy-session-crash.int.test.ts covers it. */
const steerOnly: readonly CrashPointName[] = crashPointNames.filter((point) => point.includes('_steer_'));
/** Team turns are not on a single agent's path: test/orchestration/team-crash.int.test.ts covers them. */
const mainPathPoints = crashPointNames.filter(
  (point) =>
    !fallbackOnly.includes(point) &&
    !compactionOnly.includes(point) &&
    !supervisorOnly.includes(point) &&
    !steerOnly.includes(point) &&
    !point.startsWith('team.') &&
    // Reached only by an agent with an after-phase effect: after-effects-crash.int.test.ts covers it.
    point !== 'iteration.after_effects_decided' &&
    // Reached only after an effect asked the person (decision 0049): after-ask-crash.int.test.ts kills there.
    !point.includes('_effect_answer_') &&
    // A step handed back for a capable worker: test/integration/capabilities.int.test.ts covers them.
    !point.startsWith('capability.') &&
    // An interruption is written by the process that sends the message (an API), not by a worker:
    // busy-session-crash.int.test.ts kills that process at each of its points.
    !point.startsWith('message.') &&
    // A retry's and a fork's commits are made by the process that asks for them (an API), not by a worker:
    // test/orchestration/retry-fork.int.test.ts kills that process at each of them; likewise a submission's,
    // in test/api/idempotent-submission-crash.int.test.ts.
    !point.startsWith('steer.') &&
    !point.startsWith('submit.') &&
    // The webhook dispatcher's are not on a run's path: webhooks.int.test.ts kills a worker at each.
    !point.startsWith('webhook.') &&
    // A schedule's fire is not on a run's path: schedule-crash.int.test.ts kills a worker at each.
    !point.startsWith('schedule.') &&
    // Reached only with fair admission configured: fair-admission-runs.int.test.ts kills a worker at each.
    !point.startsWith('admission.') &&
    // Reached only by a call a remembered approval covers: remembered-approvals-crash.int.test.ts kills there.
    point !== 'tool.after_remembered_approval',
);

let reference: Reference;
const harnesses: Harness[] = [];
const track = (harness: Harness) => harnesses.push(harness);

beforeAll(async () => {
  reference = await referenceRun(script, 'crash me');
  expect(reference.effects).toEqual(['email ada@example.com']);
});

afterAll(async () => {
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
});

describe('SIGKILL at each named crash point, then a fresh worker takes over', () => {
  it.each(mainPathPoints.map((point) => [point]))('%s', async (point) => {
    const outcome = await crashAndTakeOver(script, 'crash me', point, track);
    await expectSameAsReference(outcome, reference);
    // The idempotent email was sent once, or re-sent with the same key when the crash cut its call.
    const effects = outcome.harness.effects();
    expect(new Set(effects.map((effect) => effect.label))).toEqual(new Set(['email ada@example.com']));
    expect(new Set(effects.map((effect) => effect.key)).size).toBe(1);
  });
});

describe('a tool call cut by a crash', () => {
  const charge: Script = {
    replies: [
      { text: 'charging', tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
      { text: 'checked the charge' },
    ],
  };

  it.each(['tool.mid_call', 'tool.before_commit'])(
    'is not re-run when not idempotent (%s)',
    async (point) => {
      const outcome = await crashAndTakeOver(charge, 'charge it', point, track);
      expect(outcome.harness.effects().map((effect) => effect.label)).toEqual(['charge 42']);
      const chat = await outcome.harness.transcript(outcome.sessionId);
      const result = toolResultsOf(chat[2] ?? { parts: [] })[0];
      expect(result?.is_error).toBe(true);
      expect(result?.content).toMatch(
        /interrupted .* outcome is unknown: it may or may not have taken effect/,
      );
      const events = await outcome.harness.events(outcome.sessionId);
      const end = events.find((event) => event.kind === 'tool_call_end');
      expect(end?.kind === 'tool_call_end' && end.data.interrupted).toBe('outcome_unknown');
      expect(events.filter((event) => event.kind === 'tool_call_start')).toHaveLength(1);
    },
  );

  it('is re-run with the same idempotency key when idempotent', async () => {
    const email: Script = {
      replies: [
        { text: 'mailing', tool_calls: [{ name: 'send_email', arguments: { to: 'bob@example.com' } }] },
        { text: 'sent' },
      ],
    };
    const outcome = await crashAndTakeOver(email, 'mail it', 'tool.mid_call', track);
    const effects = outcome.harness.effects();
    expect(effects.map((effect) => effect.label)).toEqual(['email bob@example.com', 'email bob@example.com']);
    expect(effects[0]?.key).toBe(effects[1]?.key);
    expect(effects[0]?.pid).not.toBe(effects[1]?.pid);
    const chat = await outcome.harness.transcript(outcome.sessionId);
    expect(toolResultsOf(chat[2] ?? { parts: [] })[0]).toMatchObject({
      content: '{"sent":"bob@example.com"}',
      is_error: false,
    });
    const events = await outcome.harness.events(outcome.sessionId);
    const end = events.find((event) => event.kind === 'tool_call_end');
    expect(end?.kind === 'tool_call_end' && end.data.interrupted).toBe('rerun');
  });
});
