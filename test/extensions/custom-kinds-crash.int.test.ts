import { describe, expect, inject, it } from 'vitest';
import { assertCrashSafe, crashTest } from '../../src/testing/index.js';

// Extensions written in code through the crash-test kit: a run with a worker SIGKILLed at a crash point ends
// as the run without faults (same chat, events, runs; at most one model call more per kill). The kinds are
// the extension examples' own definitions (examples/kinds), registered by the fixture's workers.
const worker = new URL('./fixtures/custom-kinds-worker.ts', import.meta.url);
const redisUrl = inject('redisUrl');

describe('crashTest on kinds written in code', () => {
  it('finds no difference with a custom redacting effect and one injecting a note', async () => {
    const report = await crashTest({
      worker,
      redisUrl,
      script: {
        replies: [
          { tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
          { text: 'five, sent to [email removed]' },
        ],
      },
      agent: { toolboxes: ['test'], effects: [{ kind: 'redact_emails' }, { kind: 'iteration_note' }] },
      task: 'add 2 and 3, then mail ann@example.com',
      crashPoints: [
        'iteration.before_model_call@2',
        'iteration.after_model_call@2',
        'iteration.after_commit@2',
      ],
    });
    assertCrashSafe(report);
    expect(report.reference.snapshot.result).toBe('five, sent to [email removed]');
    expect(report.crashes.every((crash) => crash.reached)).toBe(true);
  });

  it('finds no difference with a keyword coordinator and a stop condition', async () => {
    const scripted = (name: string, replies: unknown[]) => ({
      name,
      kind: 'scripted',
      model: 'test',
      replies,
    });
    const agent = (name: string) => ({ name, provider: `model-${name}`, toolboxes: ['test'] });
    const report = await crashTest({
      worker,
      redisUrl,
      config: {
        providers: [
          scripted('model-writer', [{ text: 'A fox.' }, { text: 'A quick brown fox jumps over the dog.' }]),
          scripted('model-editor', [{ text: 'Say more.' }]),
          scripted('model-reviewer', [{ text: 'Reviewed.' }]),
        ],
        agents: [agent('writer'), agent('editor'), agent('reviewer')],
        teams: [
          {
            name: 'studio',
            members: [{ agent: 'writer' }, { agent: 'editor' }],
            coordinator: { kind: 'round_robin_until', until: { long_enough: { words: 6 } }, max_rounds: 4 },
          },
          {
            name: 'desk',
            members: [
              { agent: 'reviewer', role: 'review' },
              { agent: 'studio', role: 'draft' },
            ],
            coordinator: { kind: 'keyword', fallback_role: 'draft' },
          },
        ],
      },
      task: { input: 'draft a sentence about a fox', agent: 'desk' },
      crashPoints: ['team.before_turn_commit@1', 'team.after_turn_commit@2'],
      extraModelCallsPerKill: 2,
    });
    assertCrashSafe(report);
    expect(report.reference.snapshot.result).toBe('A quick brown fox jumps over the dog.');
    expect(report.crashes.every((crash) => crash.reached)).toBe(true);
  });

  it('finds no difference with the cheap-router middleware (the example routing to the small model)', async () => {
    const scripted = (name: string, model: string, replies: unknown[]) => ({
      name,
      kind: 'scripted',
      model,
      replies,
    });
    const report = await crashTest({
      worker,
      redisUrl,
      config: {
        providers: [
          scripted('large', 'large-model', [{ text: 'unused' }]),
          scripted('small', 'small-model', [
            { tool_calls: [{ name: 'add', arguments: { a: 2, b: 2 } }] },
            { text: '4' },
          ]),
        ],
        agents: [
          {
            name: 'assistant',
            provider: 'large',
            toolboxes: ['test'],
            middleware: [{ kind: 'cheap_router', cheap_provider: 'small', max_chars: 2_000 }],
          },
        ],
      },
      task: 'What is 2 + 2?',
      crashPoints: [
        'iteration.after_model_call@1',
        'iteration.after_commit@1',
        'tool.after_commit@1',
        'iteration.after_model_call@2',
      ],
    });
    assertCrashSafe(report);
    expect(report.reference.snapshot.result).toBe('4');
    expect(report.crashes.every((crash) => crash.reached)).toBe(true);
  });
});
