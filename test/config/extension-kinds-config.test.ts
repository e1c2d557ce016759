import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, type ConfigExtensions, parseConfigText } from '../../src/config/index.js';
import { defineCoordinator, defineStopCondition } from '../../src/extensions/coordinators.js';
import { defineEffect } from '../../src/extensions/effects.js';
import '../../src/models/index.js';

// Kinds registered in code (extensions) are named in the config and checked as the built-ins are: an unknown
// kind with a did-you-mean over every known one, options by the kind's own schema, each problem at its path.

const redact = defineEffect({
  kind: 'redact_emails',
  options: z.object({ replacement: z.string().default('[email]'), keep_domain: z.boolean().default(false) }),
  plan: () => undefined,
});

function parse(agent: string, extensions: ConfigExtensions = { effects: [redact] }) {
  const text = [
    'providers:',
    '  - { name: main, kind: scripted, model: m, replies: [{ text: done }] }',
    'agents:',
    '  - name: helper',
    '    provider: main',
    ...agent.split('\n').map((line) => `    ${line}`),
  ].join('\n');
  return parseConfigText(text, { env: {}, configDir: '.', extensions });
}

function problemsOf(agent: string, extensions?: ConfigExtensions): string[] {
  try {
    parse(agent, extensions);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('effects of kinds registered in code', () => {
  it('are taken by kind, their params parsed by their schema with its defaults', () => {
    const { config } = parse('effects: [{ kind: redact_emails }, { kind: trim_tool_results }]');
    expect(config.agents[0]?.effects).toEqual([
      { kind: 'redact_emails', params: { replacement: '[email]', keep_domain: false } },
      { kind: 'trim_tool_results', params: { max_result_length: 2000, preserve_recent: 4 } },
    ]);
  });

  it('are unknown without the extension, and a misspelt kind gets a did-you-mean over every known kind', () => {
    expect(problemsOf('effects: [{ kind: redact_emails }]', {})).toEqual([
      expect.stringMatching(
        /^agents\[0\]\.effects\[0\]\.kind: unknown effect kind "redact_emails"; known kinds: compact,/,
      ),
    ]);
    expect(problemsOf('effects: [{ kind: redact_email }]')).toEqual([
      'agents[0].effects[0].kind: unknown effect kind "redact_email" (did you mean "redact_emails"?); known kinds: compact, trim_tool_results, sliding_window, observation_mask, loop_detect, reflection, progress, redact_emails',
    ]);
  });

  it('report a bad option at its path, and an unknown one with the known keys, even for a non-strict schema', () => {
    expect(
      problemsOf('effects: [{ kind: redact_emails, params: { replacement: 3, keep_domian: true } }]'),
    ).toEqual([
      'agents[0].effects[0].params.replacement: expected a string, got 3',
      'agents[0].effects[0].params.keep_domian: unknown key (did you mean "keep_domain"?)',
    ]);
  });
});

describe('options.max_iterations: 0', () => {
  it('is no limit, allowed with a deadline or a budget', () => {
    expect(
      parse('options: { max_iterations: 0, timeout_s: 600 }').config.agents[0]?.options.max_iterations,
    ).toBe(0);
    expect(problemsOf('options: { max_iterations: 0 }\nbudget: { tokens: 100000 }')).toEqual([]);
    expect(problemsOf('options: { max_iterations: 0 }\nbudget: { cost_usd: 2 }')).toEqual([]);
  });

  it('without either is refused at its path, saying what to set', () => {
    expect(problemsOf('options: { max_iterations: 0 }\nbudget: { on_exceeded: ask }')).toEqual([
      'agents[0].options.max_iterations: 0 means no iteration limit, which needs something else to end a run: set options.timeout_s (a deadline) or budget.tokens / budget.cost_usd, or give max_iterations of 1 or more',
    ]);
    expect(problemsOf('options: { max_iterations: -1 }')).toEqual([
      expect.stringMatching(/^agents\[0\]\.options\.max_iterations: /),
    ]);
  });
});

const keyword = defineCoordinator({
  kind: 'keyword',
  options: z.strictObject({ keyword: z.string().min(1), max_turns: z.int().positive().default(5) }),
  select: () => ({ done: true }),
});
const testsPass = defineStopCondition({
  name: 'tests_pass',
  options: z.strictObject({ suite: z.string().min(1) }),
  holds: () => true,
});

function teamProblems(
  coordinator: string,
  extensions: ConfigExtensions = { coordinators: [keyword], stopConditions: [testsPass] },
) {
  const text = [
    'providers:',
    '  - { name: main, kind: scripted, model: m, replies: [{ text: done }] }',
    'agents:',
    '  - { name: writer, provider: main }',
    'teams:',
    `  - { name: crew, members: [{ agent: writer }], coordinator: ${coordinator} }`,
  ].join('\n');
  try {
    return { config: parseConfigText(text, { env: {}, configDir: '.', extensions }).config, problems: [] };
  } catch (error) {
    if (error instanceof ConfigError) return { config: undefined, problems: error.problems };
    throw error;
  }
}

describe('coordinators and stop conditions registered in code', () => {
  it('are taken by kind and by name, their fields parsed by their schemas', () => {
    expect(teamProblems('{ kind: keyword, keyword: review }').config?.teams[0]?.coordinator).toEqual({
      kind: 'keyword',
      keyword: 'review',
      max_turns: 5,
    });
    expect(
      teamProblems('{ kind: round_robin_until, until: { tests_pass: { suite: unit } } }').config?.teams[0]
        ?.coordinator,
    ).toEqual({ kind: 'round_robin_until', until: { tests_pass: { suite: 'unit' } }, max_rounds: 10 });
    expect(teamProblems('{ kind: loop }').config?.teams[0]?.coordinator).toEqual({
      kind: 'loop',
      max_rounds: 3,
    });
  });

  it('name an unknown kind or condition with a did-you-mean over all known ones', () => {
    expect(teamProblems('{ kind: keywords, keyword: review }').problems).toEqual([
      'teams[0].coordinator.kind: unknown coordinator kind "keywords" (did you mean "keyword"?); known kinds: sequence, loop, round_robin_until, role_round_robin, llm, keyword',
    ]);
    expect(teamProblems('{ kind: keyword, keyword: review }', {}).problems).toEqual([
      'teams[0].coordinator.kind: unknown coordinator kind "keyword"; known kinds: sequence, loop, round_robin_until, role_round_robin, llm',
    ]);
    // A name every object has is no kind.
    expect(teamProblems('{ kind: constructor }', {}).problems).toEqual([
      'teams[0].coordinator.kind: unknown coordinator kind "constructor"; known kinds: sequence, loop, round_robin_until, role_round_robin, llm',
    ]);
    expect(
      teamProblems('{ kind: round_robin_until, until: { test_pass: { suite: unit } } }').problems,
    ).toEqual([
      'teams[0].coordinator.until.test_pass: unknown stop condition "test_pass" (did you mean "tests_pass"?); known conditions: contains, state_key, state_equals, tests_pass',
    ]);
    expect(teamProblems('{ kind: round_robin_until, until: {} }').problems).toEqual([
      'teams[0].coordinator.until: give exactly one of `contains`, `state_key`, `state_equals` or `tests_pass`',
    ]);
  });

  it('report bad or unknown fields at their path', () => {
    expect(teamProblems('{ kind: keyword, keyword: 3, max_turn: 2 }').problems).toEqual([
      'teams[0].coordinator.keyword: expected a string, got 3',
      'teams[0].coordinator.max_turn: unknown key (did you mean "max_turns"?)',
    ]);
    expect(teamProblems('{ kind: round_robin_until, until: { tests_pass: {} } }').problems).toEqual([
      expect.stringMatching(/^teams\[0\]\.coordinator\.until\.tests_pass\.suite: /),
    ]);
    expect(teamProblems('{ kind: loop, max_round: 2 }').problems).toEqual([
      expect.stringMatching(/^teams\[0\]\.coordinator\.max_round: unknown key \(did you mean "max_rounds"\?/),
    ]);
  });
});
