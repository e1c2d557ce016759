import { describe, expect, inject, it } from 'vitest';
import { assertCrashSafe, crashTest } from '../../src/testing/index.js';

// Ratchet's own built-ins through the kit users get: the same crashTest finds no difference. Two crash
// points each, at the commits the feature adds (a compaction's, a team turn's): the full lists are covered
// by test/integration/effects-crash.int.test.ts and test/orchestration/team-crash.int.test.ts.
const worker = new URL('./fixtures/test-toolbox-worker.ts', import.meta.url);
const redisUrl = inject('redisUrl');

describe('crashTest on built-ins', () => {
  it('finds no difference with the compact, loop_detect and progress effects', async () => {
    const report = await crashTest({
      worker,
      redisUrl,
      config: {
        providers: [
          {
            name: 'model',
            kind: 'scripted',
            model: 'test',
            context_window: 4000,
            replies: [
              ...Array.from({ length: 5 }, (_, index) => ({
                text: `step ${index}`,
                tool_calls: [{ name: 'big_result', arguments: { label: `r${index}`, size: 1000 } }],
              })),
              { text: 'finished' },
            ],
            summary: { text: 'SUMMARY: the results so far' },
          },
        ],
      },
      agent: {
        toolboxes: ['test'],
        effects: [
          { kind: 'compact', params: { threshold: 0.5 } },
          { kind: 'loop_detect', params: { threshold: 3, window_size: 6 } },
          { kind: 'progress', params: { interval: 2 } },
        ],
      },
      task: 'fetch and compact',
      crashPoints: ['iteration.before_summary_call', 'iteration.after_summary_commit'],
    });
    assertCrashSafe(report);
    const events = report.reference.snapshot.runs.root?.events ?? [];
    expect(events.filter((event) => event.includes('"kind":"compaction"')).length).toBeGreaterThan(0);
    expect(report.crashes.every((crash) => crash.reached)).toBe(true);
  });

  it('finds no difference with a team and its role_round_robin coordinator', async () => {
    const member = (name: string, script: Record<string, unknown>) => ({
      provider: { name: `model-${name}`, kind: 'scripted', model: 'test', ...script },
      agent: {
        name,
        description: `the ${name} agent`,
        instructions: `You are ${name}.`,
        provider: `model-${name}`,
        toolboxes: ['test'],
      },
    });
    const members = [
      member('counter', {
        rules: [{ when: { role: 'tool' }, reply: { text: 'count: 7' } }],
        replies: [{ tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] }],
      }),
      member('writer', { default: { text: 'seven it is' } }),
    ];
    const report = await crashTest({
      worker,
      redisUrl,
      config: {
        providers: members.map((entry) => entry.provider),
        agents: members.map((entry) => entry.agent),
        teams: [
          {
            name: 'crew',
            members: [
              { agent: 'counter', role: 'research' },
              { agent: 'writer', role: 'write' },
            ],
            coordinator: { kind: 'role_round_robin', max_rounds: 1 },
          },
        ],
      },
      task: { input: 'count and name', agent: 'crew' },
      crashPoints: ['team.before_turn_commit@1', 'team.after_turn_commit@1'],
    });
    assertCrashSafe(report);
    expect(report.reference.snapshot.result).toBe('seven it is');
    expect(Object.keys(report.reference.snapshot.runs)).toEqual(['root', 'root/counter', 'root/writer']);
    expect(report.crashes.every((crash) => crash.reached)).toBe(true);
  });
});
