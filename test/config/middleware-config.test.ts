import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, parseConfigText } from '../../src/config/index.js';
import { defineMiddleware } from '../../src/extensions/middleware.js';
import '../../src/models/index.js';

const router = defineMiddleware({
  name: 'cheap_router',
  options: z.strictObject({
    cheap_provider: z.string(),
    max_chars: z.number().int().positive().default(200),
  }),
  aroundModelCall: (call, next) => next(call.request),
});
const audit = defineMiddleware({ name: 'audit', aroundModelCall: (call, next) => next(call.request) });
const extensions = { middleware: [router, audit] };

function configWith(middleware: string): string {
  return [
    'providers:',
    '  - { name: big, kind: scripted, model: big, script: script.json }',
    'agents:',
    '  - name: helper',
    '    provider: big',
    `    middleware: ${middleware}`,
  ].join('\n');
}

function problemsOf(text: string): string[] {
  try {
    parseConfigText(text, { env: {}, configDir: '.', extensions });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('agents[].middleware', () => {
  it('takes registered middleware by name, options parsed with their defaults', () => {
    const loaded = parseConfigText(
      configWith('[{ kind: cheap_router, cheap_provider: small }, { kind: audit }]'),
      {
        env: {},
        configDir: '.',
        extensions,
      },
    );
    expect(loaded.config.agents[0]?.middleware).toEqual([
      { kind: 'cheap_router', options: { cheap_provider: 'small', max_chars: 200 } },
      { kind: 'audit', options: {} },
    ]);
  });

  it('takes the built-in kinds (output_guardrail, timeout, logger, recovery) with their options', () => {
    const loaded = parseConfigText(
      configWith(
        '[{ kind: output_guardrail, deny: [secret], on_fail: retry }, { kind: timeout, model_call_s: 30 }, ' +
          '{ kind: logger }, { kind: recovery }]',
      ),
      { env: {}, configDir: '.' },
    );
    expect(loaded.config.agents[0]?.middleware).toEqual([
      {
        kind: 'output_guardrail',
        options: { deny: ['secret'], allow: [], on_fail: 'retry', max_retries: 2 },
      },
      { kind: 'timeout', options: { model_call_s: 30 } },
      { kind: 'logger', options: { level: 'info' } },
      { kind: 'recovery', options: {} },
    ]);
    expect(problemsOf(configWith('[{ kind: timeout }, { kind: logger, level: loud }]'))).toEqual([
      'agents[0].middleware[0]: give model_call_s, tool_call_s or both (seconds)',
      expect.stringMatching(/^agents\[0\]\.middleware\[1\]\.level: /),
    ]);
  });

  it('names an unknown kind with a did-you-mean and the known kinds', () => {
    expect(problemsOf(configWith('[{ kind: cheap_ruter }]'))).toEqual([
      'agents[0].middleware[0].kind: unknown middleware kind "cheap_ruter" (did you mean "cheap_router"?); known kinds: output_guardrail, timeout, logger, recovery, cheap_router, audit',
    ]);
  });

  it('reports bad options at their path', () => {
    expect(
      problemsOf(configWith('[{ kind: cheap_router, max_chars: -1 }, { kind: audit, level: 3 }]')),
    ).toEqual([
      'agents[0].middleware[0].cheap_provider: required',
      'agents[0].middleware[0].max_chars: must be greater than 0',
      'agents[0].middleware[1].level: unknown key (expected one of: kind)',
    ]);
  });
});
