import { describe, expect, inject, it } from 'vitest';
import {
  assertCrashSafe,
  CrashTestError,
  crashTest,
  formatCrashTestReport,
} from '../../src/testing/index.js';

// The kit on tools of a user's own (test/testing/fixtures/ledger-tools.ts). A few crash points each, around
// the tool call, where a tool's side effects are at stake: every point costs a worker process (seconds).
const worker = new URL('./fixtures/ledger-tools.ts', import.meta.url);
const redisUrl = inject('redisUrl');

/** An agent that calls one tool of the fixture's `shop` toolbox once, then answers. */
function crashTestOfOneCall(tool: string, answer: string, crashPoints: string[]) {
  return crashTest({
    worker,
    redisUrl,
    agent: { toolboxes: ['shop'] },
    script: {
      replies: [{ tool_calls: [{ name: tool, arguments: { amount: 42 } }] }, { text: answer }],
    },
    task: `${tool} 42`,
    crashPoints,
  });
}

describe('crashTest on a tool of your own', () => {
  it('finds no difference when the tool records its side effect once per idempotency key', async () => {
    const report = await crashTestOfOneCall('charge', 'charged 42', [
      'tool.mid_call',
      'tool.before_commit',
      'tool.after_commit',
    ]);
    assertCrashSafe(report);
    expect(report.reference.snapshot.result).toBe('charged 42');
    // The idempotency key names the run by its place in the tree, so two executions' ledgers compare.
    expect(report.reference.sideEffects).toEqual([
      { key: expect.stringContaining('root'), value: { charged: 42 } },
    ]);
    expect(report.crashes.map((crash) => [crash.crashAt, crash.reached])).toEqual([
      ['tool.mid_call', true],
      ['tool.before_commit', true],
      ['tool.after_commit', true],
    ]);
    expect(formatCrashTestReport(report)).toContain('no difference at 3 crash points');
  });

  it('reports the side effect a repeated call has twice when the tool wrongly says it is idempotent', async () => {
    // At tool.before_commit the call has had its effect but its outcome is not recorded: the call runs
    // again, and so does its effect.
    const report = await crashTestOfOneCall('tally', 'added 42', [
      'tool.before_commit',
      'team.before_turn_commit',
    ]);
    expect(report.ok).toBe(false);
    expect(report.reference.sideEffects).toEqual([{ key: 'tally', value: 42 }]);
    expect(report.crashes.map((crash) => [crash.crashAt, crash.reached])).toEqual([
      ['tool.before_commit', true],
      // Not on a single agent's path: reported as not reached, with no difference.
      ['team.before_turn_commit', false],
    ]);
    expect(report.differences).toEqual([
      {
        crashAt: 'tool.before_commit',
        kind: 'side_effects',
        detail: 'side effects in the ledger: 1 more than without faults: {"key":"tally","value":42}',
      },
    ]);
    expect(() => assertCrashSafe(report)).toThrow(CrashTestError);
    expect(() => assertCrashSafe(report)).toThrow(
      /1 differences[\s\S]*- at tool\.before_commit, side_effects: side effects in the ledger: 1 more than without faults/,
    );
  });
});
