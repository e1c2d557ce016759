import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, type ConfigExtensions, parseConfigText } from '../../src/config/index.js';
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
