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
const logger = defineMiddleware({ name: 'logger', aroundModelCall: (call, next) => next(call.request) });
const extensions = { middleware: [router, logger] };

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
      configWith('[{ kind: cheap_router, cheap_provider: small }, { kind: logger }]'),
      {
        env: {},
        configDir: '.',
        extensions,
      },
    );
    expect(loaded.config.agents[0]?.middleware).toEqual([
      { kind: 'cheap_router', options: { cheap_provider: 'small', max_chars: 200 } },
      { kind: 'logger', options: {} },
    ]);
  });

  it('names an unknown kind with a did-you-mean and the known kinds', () => {
    expect(problemsOf(configWith('[{ kind: cheap_ruter }]'))).toEqual([
      'agents[0].middleware[0].kind: unknown middleware kind "cheap_ruter" (did you mean "cheap_router"?); known kinds: cheap_router, logger',
    ]);
  });

  it('reports bad options at their path', () => {
    expect(
      problemsOf(configWith('[{ kind: cheap_router, max_chars: -1 }, { kind: logger, level: 3 }]')),
    ).toEqual([
      'agents[0].middleware[0].cheap_provider: required',
      'agents[0].middleware[0].max_chars: must be greater than 0',
      'agents[0].middleware[1].level: unknown key (expected one of: kind)',
    ]);
  });
});
